import type { z } from 'zod';
import type { ServiceLogger } from '../log/service-logger';

/** A service's environment, parsed; or every bad variable by name. */
export type EnvironmentResult<T> = { ok: true; env: T } | { ok: false; message: string; errors: string[] };

/** Thrown by {@link requireEnvironment}: the same readable list. */
export class InvalidEnvironmentError extends Error {
  constructor(
    message: string,
    readonly errors: string[],
  ) {
    super(message);
    this.name = 'InvalidEnvironmentError';
  }
}

/**
 * The one environment parser of every service. Empty values count as unset (deploy tools
 * render an unset variable as ""), and a failure lists every bad variable with its rule:
 * `invalid gateway configuration:\n  - GATEWAY_PORT: ...`.
 */
export function parseEnvironment<S extends z.ZodType>(schema: S, source: Readonly<Record<string, string | undefined>>, service: string): EnvironmentResult<z.output<S>> {
  const set = Object.fromEntries(Object.entries(source).filter(([, v]) => v !== undefined && v !== ''));
  const r = schema.safeParse(set);
  if (r.success) return { ok: true, env: r.data };
  const errors = r.error.issues.map((i) => `${i.path.join('.') || '(environment)'}: ${i.message}`);
  return { ok: false, message: `invalid ${service} configuration:\n${errors.map((e) => `  - ${e}`).join('\n')}`, errors };
}

/** {@link parseEnvironment}, throwing {@link InvalidEnvironmentError} on a bad variable. */
export function requireEnvironment<S extends z.ZodType>(schema: S, source: Readonly<Record<string, string | undefined>>, service: string): z.output<S> {
  const r = parseEnvironment(schema, source, service);
  if (!r.ok) throw new InvalidEnvironmentError(r.message, r.errors);
  return r.env;
}

/** How every service stops on a bad environment: one fatal line naming each variable, exit code 2. */
export function exitOnInvalidEnvironment(log: ServiceLogger, invalid: { message: string; errors: string[] }): never {
  log.fatal((invalid.message.split('\n')[0] ?? 'invalid configuration').replace(/:$/, ''), { errors: invalid.errors });
  process.exit(2);
}
