import pino from 'pino';
import { prettyLine } from './pretty';
import { currentRequestId } from './request-context';
import { tickBatchedFd } from './tick-batched-destination';

/** pino's levels; `silent` writes nothing. */
export const LOG_LEVELS = ['silent', 'fatal', 'error', 'warn', 'info', 'debug', 'trace'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
export type LogFields = Record<string, unknown>;
/** `json`: one JSON object per line (files, pipes, log shippers). `pretty`: coloured text for a person at a terminal. */
export const LOG_FORMATS = ['json', 'pretty'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

/** Free functions (no `this`): a logger's methods can be handed around unbound. */
export type LogWrite = (msg: string, fields?: LogFields) => void;

/** The one logging surface of every service: a message and flat fields. */
export interface ServiceLogger {
  fatal: LogWrite;
  error: LogWrite;
  warn: LogWrite;
  info: LogWrite;
  debug: LogWrite;
  trace: LogWrite;
  enabled: (level: Exclude<LogLevel, 'silent'>) => boolean;
  /** The same logger with `bindings` on every line (a component name, a runner id). */
  child: (bindings: LogFields) => ServiceLogger;
}

export interface ServiceLoggerOptions {
  /** Names the process on every line (`gateway`, `runner`, ...). */
  service: string;
  level?: LogLevel;
  /** Default: {@link logFormatFor} the stream written to. */
  format?: LogFormat;
  /** 1 = stdout (default), 2 = stderr. */
  fd?: 1 | 2;
  /** Lines go here instead of `fd` (an in-process reader: tests, a collector). */
  sink?: { write: (line: string) => void };
}

/**
 * `LOG_FORMAT=json|pretty` when set; otherwise pretty only when the stream is a terminal, so a
 * file or a pipe (`pnpm start` writes `.paddock/*.log` from one) always gets JSON lines.
 */
export function logFormatFor(fd: 1 | 2, env: NodeJS.ProcessEnv = process.env): LogFormat {
  const chosen = env.LOG_FORMAT;
  if (chosen === 'json' || chosen === 'pretty') return chosen;
  return (fd === 1 ? process.stdout : process.stderr).isTTY ? 'pretty' : 'json';
}

function wrap(p: pino.Logger): ServiceLogger {
  const at =
    (level: Exclude<LogLevel, 'silent'>) =>
    (msg: string, fields?: LogFields): void => {
      if (fields) p[level](fields, msg);
      else p[level](msg);
    };
  return {
    fatal: at('fatal'),
    error: at('error'),
    warn: at('warn'),
    info: at('info'),
    debug: at('debug'),
    trace: at('trace'),
    enabled: (level) => p.isLevelEnabled(level),
    child: (bindings) => wrap(p.child(bindings)),
  };
}

/** sonic-boom in its synchronous mode: a partial write or EAGAIN (a full pipe) is retried, not dropped. */
function syncWriter(fd: number): (text: string) => void {
  const out = pino.destination({ dest: fd, sync: true });
  return (text) => void out.write(text);
}

/**
 * A service's logger: pino, its lines written once per event-loop turn and synchronously as the
 * process exits (no line lost on `process.exit`: see TickBatchedDestination), with the
 * level as a word, an ISO time, the service's name and the current request id (if any) on
 * every line.
 */
export function createServiceLogger(opts: ServiceLoggerOptions): ServiceLogger {
  const fd = opts.fd ?? 1;
  const format = opts.format ?? (opts.sink ? 'json' : logFormatFor(fd));
  const out = opts.sink ?? (fd === 1 ? process.stdout : process.stderr);
  const destination: pino.DestinationStream =
    format === 'pretty'
      ? { write: (line: string) => void out.write(prettyLine(line)) }
      : (opts.sink ?? tickBatchedFd(fd, syncWriter));
  const p = pino(
    {
      level: opts.level ?? 'info',
      base: { service: opts.service },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      mixin: () => {
        const requestId = currentRequestId();
        return requestId === undefined ? {} : { requestId };
      },
    },
    destination,
  );
  return wrap(p);
}
