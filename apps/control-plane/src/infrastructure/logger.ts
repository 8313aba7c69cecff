import { createServiceLogger, nestLoggerFor, type NestLoggerLike, type ServiceLogger } from '@paddock/kit';
import type { Env } from '../config/env';

/** The control plane's logger: JSON lines (pretty at a terminal). */
export function controlPlaneLogger(level: Env['LOG_LEVEL'] = 'info'): ServiceLogger {
  return createServiceLogger({ service: 'control-plane', level });
}

/** Nest's logger for the app, or none at all for `silent`. */
export function createLogger(level: Env['LOG_LEVEL']): NestLoggerLike | false {
  if (level === 'silent') return false;
  return nestLoggerFor(controlPlaneLogger(level));
}
