export * from './errors';
export * from './enums';
