export type {
  EventMetadata,
  NewEvent,
  RecordedEvent,
  ExpectedVersion,
  IdempotencyOptions,
  AppendOptions,
  AppendResult,
  LogCursor,
  EventStoreTables,
} from './types';
export { START_CURSOR } from './types';
export {
  ExpectedVersionConflictError,
  IdempotencyConflictError,
  CheckpointConflictError,
} from './errors';
export {
  EventStore,
  type EventStoreOptions,
  type Folder,
  type Projection,
  type ProjectionStatement,
} from './event-store';
export {
  readAll,
  readPositions,
  compareCursors,
  type ReadAllOptions,
  type ReadAllResult,
  type ReadPositionsOptions,
  type ReadPositionsResult,
  type LogPosition,
  type LogFilter,
} from './global-log';
export { LogFollower, type LogFollowerOptions } from './log-follower';
export { Processor, type ProcessorOptions, type ProcessorLag } from './processor';
export { LogWaker, LOG_CHANNEL } from './log-waker';
export { createPostgresDb, logWakerOf, type PostgresDbOptions } from './postgres';
export { precompile } from './precompiled';
export { migrateEventStore } from './migrate';
export { eventStoreMigrations } from './migrations';
