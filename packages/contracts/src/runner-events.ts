// Owned by the runner-events author; filled in by its issue's work.
export {};
