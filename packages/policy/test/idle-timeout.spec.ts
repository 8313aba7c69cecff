import { validatePolicy } from '../src/index';

/** `constraints.lifecycle.idleTimeoutSeconds`, the Paddock extension that pauses idle sandboxes. */
describe('policy: lifecycle.idleTimeoutSeconds', () => {
  const withIdle = (idleTimeoutSeconds: unknown): unknown => ({ constraints: { lifecycle: { idleTimeoutSeconds } } });

  it('accepts 0 (never) and 10 s up to 30 days', () => {
    for (const v of [0, 10, 3600, 2_592_000]) expect(validatePolicy(withIdle(v)).ok).toBe(true);
  });

  it('refuses a value outside the range, naming the field and the rule', () => {
    for (const v of [5, -1, 2_592_001]) {
      const r = validatePolicy(withIdle(v));
      expect(r.ok).toBe(false);
      if (r.ok) continue;
      expect(r.violations.map((x) => [x.field, x.rule])).toEqual([['constraints.lifecycle.idleTimeoutSeconds', 'range']]);
    }
  });
});
