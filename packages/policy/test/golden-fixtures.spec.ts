import { compareWithFixture, decideFixture, loadGoldenFixtures } from '../src/testing';

const fixtures = loadGoldenFixtures();

describe('golden fixtures', () => {
  it('has at least 60 fixtures covering validate, resolve, template and explain', () => {
    expect(fixtures.length).toBeGreaterThanOrEqual(60);
    const kinds = new Set(fixtures.map((f) => f.kind));
    expect([...kinds].sort()).toEqual(['explain', 'resolve', 'template', 'validate']);
  });

  it.each(fixtures.map((f) => [f.name, f] as const))('%s', (_name, f) => {
    const decision = decideFixture(f);
    expect(compareWithFixture(f, decision)).toEqual([]);
    // Every rejection names a field and a rule.
    for (const v of decision.violations) {
      expect(v.field).not.toBe('');
      expect(v.rule).not.toBe('');
      expect(v.description.length).toBeGreaterThan(0);
    }
  });
});
