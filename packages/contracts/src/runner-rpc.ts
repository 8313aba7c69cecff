// Owned by the runner-rpc author; filled in by its issue's work.
export {};
