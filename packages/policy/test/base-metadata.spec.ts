import { compilePolicy, validatePolicy } from '../src/index';

/** What a policy's base may pin as pod metadata: annotations and labels, strings only, and nothing dropped unsaid. */
describe('policy base metadata', () => {
  it('keeps string annotations and labels, flat or under metadata', () => {
    const v = validatePolicy({ base: { annotations: { 'team.io/owner': 'ml' }, metadata: { labels: { tier: 'a' }, annotations: { 'x.io/y': 'z' } } } });
    expect(v.ok).toBe(true);
    if (!v.ok) return;
    const compiled = compilePolicy(v.policy);
    expect(compiled.ok && compiled.compiled.base).toMatchObject({ annotations: { 'team.io/owner': 'ml', 'x.io/y': 'z' }, labels: { tier: 'a' } });
  });

  it('refuses, by name, metadata other than annotations and labels and values that are not strings', () => {
    const v = validatePolicy({
      base: {
        annotations: { 'team.io/owner': 'ml', 'team.io/cost': 3 },
        labels: 'tier=a',
        metadata: { name: 'pinned', finalizers: ['x'], labels: { tier: 'a', gpu: true } },
      },
    });
    expect(v.ok).toBe(false);
    if (v.ok) return;
    expect(v.violations.map((x) => [x.field, x.rule])).toEqual([
      ['base.annotations[team.io/cost]', 'type'],
      ['base.labels', 'type'],
      ['base.metadata.finalizers', 'base_field_refused'],
      ['base.metadata.labels[gpu]', 'type'],
      ['base.metadata.name', 'base_field_refused'],
    ]);
    expect(v.violations.find((x) => x.field === 'base.metadata.name')?.description).toBe(
      'base.metadata.name: base.metadata may set only annotations and labels, not "name" (the runner owns the pod\'s other metadata)',
    );
    expect(validatePolicy({ base: { metadata: 'pod' } })).toMatchObject({ ok: false, violations: [{ field: 'base.metadata', rule: 'type' }] });
  });
});
