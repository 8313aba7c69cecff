import { ConsoleLogger, type LogLevel } from '@nestjs/common';
import type { Env } from '../config/env';

const ORDER: LogLevel[] = ['fatal', 'error', 'warn', 'log', 'debug', 'verbose'];
const CUT: Record<Env['LOG_LEVEL'], number> = { silent: 0, fatal: 1, error: 2, warn: 3, info: 4, debug: 5, trace: 6 };

/** JSON lines on stdout, or no logger at all for `silent`. */
export function createLogger(level: Env['LOG_LEVEL']): ConsoleLogger | false {
  if (level === 'silent') return false;
  return new ConsoleLogger({ json: true, colors: false, logLevels: ORDER.slice(0, CUT[level]) });
}
