export { Sandbox, type CreateOptions, type WaitOptions, type StopOptions, type LogsOptions, type ListOptions, type PurgeOptions, type PurgeResult } from './sandbox';
export { ExecProcess, type ExecOptions, type StdinWriter } from './process';
export { PaddockClient, backoffDelay, DEFAULT_GATEWAY_URL, type ClientOptions } from './client';
export * from './errors';
export * from './types';
export { AsyncChannel } from './channel';
export { FileSystemSnapshots, type FileSystemSnapshot, type SnapshotOptions } from './snapshots';
