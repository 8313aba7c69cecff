import { z } from 'zod';
import { InvalidEnvironmentError, parseEnvironment, requireEnvironment } from '../src';

const Env = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  DATABASE_URL: z.url(),
  LOG_LEVEL: z.enum(['info', 'debug']).default('info'),
});

describe('environment parsing', () => {
  it('applies defaults, and counts an empty value as unset', () => {
    expect(parseEnvironment(Env, { DATABASE_URL: 'postgres://db/x', LOG_LEVEL: '' }, 'gateway')).toEqual({
      ok: true,
      env: { PORT: 8080, DATABASE_URL: 'postgres://db/x', LOG_LEVEL: 'info' },
    });
  });

  it('lists every bad variable by name, one per line', () => {
    const r = parseEnvironment(Env, { PORT: 'eighty', DATABASE_URL: 'not a url' }, 'gateway');
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.errors.map((e) => e.split(':')[0])).toEqual(['PORT', 'DATABASE_URL']);
    expect(r.message.split('\n')).toEqual(['invalid gateway configuration:', ...r.errors.map((e) => `  - ${e}`)]);
    expect(() => requireEnvironment(Env, { PORT: '-1', DATABASE_URL: 'postgres://db/x' }, 'controller')).toThrow(InvalidEnvironmentError);
    expect(() => requireEnvironment(Env, { PORT: '-1', DATABASE_URL: 'postgres://db/x' }, 'controller')).toThrow(/invalid controller configuration:\n {2}- PORT: /);
  });
});
