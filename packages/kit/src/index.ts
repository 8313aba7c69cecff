export * from './log/service-logger';
export * from './log/request-context';
export * from './log/nest-logger';
export { prettyLine } from './log/pretty';
export * from './http/request-id';
export * from './http/errors';
export * from './validation/violations';
export * from './config/environment';
export * from './process/run-service';
