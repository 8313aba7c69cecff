// Owned by the cluster author; filled in by its issue's work.
export {};
