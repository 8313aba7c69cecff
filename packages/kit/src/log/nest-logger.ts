import type { LogFields, ServiceLogger } from './service-logger';

/**
 * Nest's `LoggerService` shape (structural, so this package needs no Nest): Nest calls
 * `log(message, context)`, `error(message, stack, context)`; each becomes one line of the
 * service's logger, the context as `context`, a stack as `stack`.
 */
export interface NestLoggerLike {
  log(message: unknown, ...params: unknown[]): void;
  error(message: unknown, ...params: unknown[]): void;
  warn(message: unknown, ...params: unknown[]): void;
  debug(message: unknown, ...params: unknown[]): void;
  verbose(message: unknown, ...params: unknown[]): void;
  fatal(message: unknown, ...params: unknown[]): void;
}

const looksLikeStack = (s: string): boolean => /\n\s+at /.test(s);

function lineOf(message: unknown, params: unknown[]): { msg: string; fields: LogFields } {
  const fields: LogFields = {};
  const details: unknown[] = [];
  const rest = [...params];
  if (rest.length && typeof rest[rest.length - 1] === 'string' && !looksLikeStack(rest[rest.length - 1] as string)) {
    fields.context = rest.pop();
  }
  for (const p of rest) {
    if (typeof p === 'string' && looksLikeStack(p)) fields.stack = p;
    else if (p instanceof Error) fields.stack = p.stack ?? p.message;
    else if (p !== undefined) details.push(p);
  }
  if (details.length) fields.details = details;
  if (message instanceof Error) {
    fields.stack ??= message.stack;
    return { msg: message.message, fields };
  }
  if (typeof message === 'object' && message !== null) return { msg: '', fields: { ...fields, ...(message as LogFields) } };
  return { msg: String(message), fields };
}

/** Nest's logger for an app: every framework line (start-up, errors) a JSON line like the app's own. */
export function nestLoggerFor(log: ServiceLogger): NestLoggerLike {
  const to =
    (write: (msg: string, fields?: LogFields) => void) =>
    (message: unknown, ...params: unknown[]): void => {
      const { msg, fields } = lineOf(message, params);
      write(msg, fields);
    };
  return {
    log: to(log.info),
    error: to(log.error),
    warn: to(log.warn),
    debug: to(log.debug),
    verbose: to(log.trace),
    fatal: to(log.fatal),
  };
}
