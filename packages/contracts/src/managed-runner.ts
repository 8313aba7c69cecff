// Owned by the managed-runner author; filled in by its issue's work.
export {};
