import { createServiceLogger, nestLoggerFor, type NestLoggerLike, type ServiceLogger } from '@paddock/kit';
import type { Env } from '../config/env';

/** The control plane's logger: JSON lines (pretty at a terminal). */
export function controlPlaneLogger(level: Env['LOG_LEVEL'] = 'info', sink?: LogSink): ServiceLogger {
  return createServiceLogger({ service: 'control-plane', level, ...(sink ? { sink } : {}) });
}

/** Where log lines go instead of stdout (an in-process reader: tests that check what is logged). */
export interface LogSink {
  write(line: string): void;
}

/** Nest's logger for the app, or none at all for `silent`. */
export function createLogger(level: Env['LOG_LEVEL'], sink?: LogSink): NestLoggerLike | false {
  if (level === 'silent') return false;
  return nestLoggerFor(controlPlaneLogger(level, sink));
}
