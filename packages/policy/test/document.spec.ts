import { seedRunnerYaml } from '@paddock/testing';
import { parsePolicyDocument } from '../src/document';
import { validatePolicy } from '../src/index';

/** Asserts a hostile input is refused with the given rule, quickly (generous bound for a loaded machine). */
function refusedQuickly(text: string, rule: string): void {
  const t0 = performance.now();
  const r = parsePolicyDocument(text);
  const ms = performance.now() - t0;
  expect(r.ok).toBe(false);
  if (!r.ok) {
    expect(r.violations[0]?.rule).toBe(rule);
    expect(r.violations[0]?.field).toBe('document');
  }
  expect(ms).toBeLessThan(200);
}

const SEED_RUNNER_YAML = seedRunnerYaml();

describe('parsePolicyDocument', () => {
  it('reads the seed runner.yaml, converting snake_case to camelCase', () => {
    const r = parsePolicyDocument(SEED_RUNNER_YAML);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    const doc = r.value as {
      spec: { maintenancePolicy: { windows: { durationSeconds: number }[] } };
      policy: unknown;
    };
    expect(doc.spec.maintenancePolicy.windows[0]?.durationSeconds).toBe(14400);
    const v = validatePolicy(doc.policy);
    expect(v.ok).toBe(true);
    if (v.ok) expect(v.policy.constraints?.resources?.requireLimits).toBe(true);
  });

  it('gives identical values for the JSON and YAML spellings', () => {
    const json = parsePolicyDocument(
      '{"constraints": {"resources": {"max_gpu_count": "2", "default_cpu": "1"}}, "base": {"nodeSelector": {"pool_name": "gpu"}}}',
    );
    const yaml = parsePolicyDocument(
      'constraints:\n  resources:\n    max_gpu_count: "2"\n    default_cpu: "1"\nbase:\n  nodeSelector:\n    pool_name: gpu\n',
    );
    expect(json).toEqual(yaml);
    expect(
      json.ok &&
        (json.value as { base: { nodeSelector: Record<string, string> } }).base.nodeSelector,
    ).toEqual({ pool_name: 'gpu' });
  });

  it('keeps user map keys verbatim during case conversion', () => {
    const r = parsePolicyDocument(
      'containers:\n  - environment_variables:\n      MY_VAR: "1"\n      lower_case: "2"\nannotations:\n  some_key: v\n',
    );
    expect(r.ok && r.value).toEqual({
      containers: [{ environmentVariables: { MY_VAR: '1', lower_case: '2' } }],
      annotations: { some_key: 'v' },
    });
  });

  it('refuses YAML aliases and anchors (billion laughs) quickly', () => {
    const laughs = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
    for (let i = 1; i < 10; i++) {
      laughs.push(
        `${String.fromCharCode(97 + i)}: &${String.fromCharCode(97 + i)} [${Array(9)
          .fill(`*${String.fromCharCode(96 + i)}`)
          .join(',')}]`,
      );
    }
    refusedQuickly(laughs.join('\n'), 'alias_refused');
    refusedQuickly('a: &x 1\nb: *x\n', 'alias_refused');
  });

  it('refuses 10,000-deep nesting quickly (flow, JSON and block forms)', () => {
    refusedQuickly('['.repeat(10_000) + ']'.repeat(10_000), 'max_depth');
    refusedQuickly('{"a":'.repeat(10_000) + '1' + '}'.repeat(10_000), 'max_depth');
    refusedQuickly('- '.repeat(10_000) + 'x', 'max_depth');
    let block = '';
    for (let i = 0; i < 1000; i++) block += `${' '.repeat(i)}k:\n`;
    refusedQuickly(block, 'max_depth');
  });

  it('refuses huge and non-finite numbers quickly', () => {
    refusedQuickly('x: 1e309', 'number_out_of_range');
    refusedQuickly('{"x": -1e309}', 'number_out_of_range');
    refusedQuickly('x: .inf', 'number_out_of_range');
    refusedQuickly('{"x": 123456789012345678901234567890}', 'number_out_of_range');
  });

  it('refuses a 10 MiB string without parsing it', () => {
    refusedQuickly(`x: "${'a'.repeat(10 * 1024 * 1024)}"`, 'max_size');
  });

  it('refuses duplicate keys in YAML and JSON', () => {
    refusedQuickly('a: 1\na: 2\n', 'duplicate_key');
    refusedQuickly('{"a": 1, "a": 2}', 'duplicate_key');
  });

  it('refuses YAML tags that build non-JSON values', () => {
    refusedQuickly('x: !!binary aGVsbG8=', 'type');
    refusedQuickly('x: !!set {a, b}', 'type');
  });

  it('reports syntax errors with their position', () => {
    const r = parsePolicyDocument('a: [1, 2\nb: 3');
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.violations[0]?.rule).toBe('parse_error');
      expect(r.violations[0]?.description).toMatch(/line \d+ column \d+/);
    }
  });

  it('accepts 64 levels of legitimate nesting', () => {
    const text = '{"a":'.repeat(60) + '1' + '}'.repeat(60);
    expect(parsePolicyDocument(text).ok).toBe(true);
  });
});
