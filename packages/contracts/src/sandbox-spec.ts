// Owned by the sandbox-spec author; filled in by its issue's work.
export {};
