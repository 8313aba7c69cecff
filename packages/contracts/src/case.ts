// Owned by the case author; filled in by its issue's work.
export {};
