// Owned by the policy author; filled in by its issue's work.
export {};
