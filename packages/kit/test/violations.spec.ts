import { z } from 'zod';
import { PaddockError } from '@paddock/contracts';
import { fieldPath, parseOrRefuse, zodViolations } from '../src';

const Spec = z.strictObject({
  containers: z.array(z.strictObject({ image: z.string().min(1, 'image cannot be empty'), maxLifetimeSeconds: z.number().optional() })),
});

describe('zod issues as field violations', () => {
  it('spells every path one way: dots between keys, indices in brackets, under an optional prefix', () => {
    expect(fieldPath(['containers', 0, 'image'])).toBe('containers[0].image');
    expect(fieldPath(['containers', 0, 'image'], { prefix: 'spec' })).toBe('spec.containers[0].image');
    expect(fieldPath(['maintenancePolicy', 'windows', 2, 'durationSeconds'], { prefix: 'runner', snakeCase: true })).toBe('runner.maintenance_policy.windows[2].duration_seconds');
  });

  it('names each broken rule, and refuses an unknown key by its own name', () => {
    const r = Spec.safeParse({ containers: [{ image: '' }, { image: 'x', imagePullPolicy: 'Always', tty: true }] });
    expect(r.success).toBe(false);
    expect(zodViolations(r.error as z.ZodError, { prefix: 'spec' })).toEqual([
      { field: 'spec.containers[0].image', rule: 'too_small', description: 'image cannot be empty' },
      { field: 'spec.containers[1].imagePullPolicy', rule: 'known_field', description: 'not a known field' },
      { field: 'spec.containers[1].tty', rule: 'known_field', description: 'not a known field' },
    ]);
    const whole = z.object({ a: z.string() }).safeParse('nope');
    expect(zodViolations(whole.error as z.ZodError)[0]?.field).toBe('(body)');
  });

  it('refuses with invalid_argument whose message names every field', () => {
    let thrown: unknown;
    try {
      parseOrRefuse(Spec, { containers: [{ image: '' }] }, { prefix: 'spec', reason: 'CWSANDBOX_INVALID_REQUEST' });
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(PaddockError);
    const e = thrown as PaddockError;
    expect([e.code, e.reason, e.message]).toEqual(['invalid_argument', 'CWSANDBOX_INVALID_REQUEST', 'spec.containers[0].image: image cannot be empty']);
    expect(parseOrRefuse(Spec, { containers: [] }, { reason: 'CWSANDBOX_INVALID_REQUEST' })).toEqual({ containers: [] });
  });
});
