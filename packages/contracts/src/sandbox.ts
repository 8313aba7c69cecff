// Owned by the sandbox author; filled in by its issue's work.
export {};
