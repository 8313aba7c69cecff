import fc from 'fast-check';
import type { FieldViolation } from '@paddock/contracts';
import {
  checkProfileTemplate,
  explainPlacement,
  resolveSandboxSpec,
  validatePolicy,
} from '../src/index';
import { parsePolicyDocument } from '../src/document';
import { clean, mutated, policyArb, specArb } from './support/arbitraries';

/** 10,000 by default, as the acceptance asks; PADDOCK_FUZZ_RUNS scales it. */
const RUNS = Number(process.env.PADDOCK_FUZZ_RUNS ?? 10_000);
const SEED = 777;

function assertNamed(violations: FieldViolation[]): void {
  expect(violations.length).toBeGreaterThan(0);
  for (const v of violations) {
    expect(typeof v.field).toBe('string');
    expect(v.field.length).toBeGreaterThan(0);
    expect(v.rule.length).toBeGreaterThan(0);
    expect(v.description.length).toBeGreaterThan(0);
    // A caught engine bug would surface as internal_error: fuzzing proves there is none.
    expect(v.rule).not.toBe('internal_error');
  }
}

// Documents: half arbitrary JSON, half valid documents mutated at random places.
const policyDocs = fc.oneof(fc.jsonValue({ maxDepth: 5 }), mutated(policyArb), mutated(policyArb));
const specDocs = fc.oneof(fc.jsonValue({ maxDepth: 5 }), mutated(specArb), mutated(specArb));
const fixedPolicy = validatePolicy({
  constraints: {
    resources: { maxCpu: '4', defaultCpu: '1' },
    network: { allowedEgress: [{ cidr: { cidr: '10.0.0.0/8' } }] },
  },
});

describe(`fuzzing (${RUNS} documents each, seed ${SEED})`, () => {
  it('policy documents: no exception escapes, every rejection names a field and a rule', () => {
    let rejected = 0;
    fc.assert(
      fc.property(policyDocs, (doc) => {
        const r = validatePolicy(doc);
        if (!r.ok) {
          rejected++;
          assertNamed(r.violations);
        } else {
          // An accepted policy must also be usable: resolving `{}` never throws.
          const res = resolveSandboxSpec({ policy: r.policy, spec: {} });
          if (!res.ok) assertNamed(res.violations);
        }
      }),
      { seed: SEED, numRuns: RUNS },
    );
    expect(rejected).toBeGreaterThan(RUNS / 10);
  });

  it('specs: no exception escapes, every rejection names a field and a rule', () => {
    if (!fixedPolicy.ok) throw new Error('fixture policy invalid');
    const policy = fixedPolicy.policy;
    let rejected = 0;
    fc.assert(
      fc.property(specDocs, (spec) => {
        const r = resolveSandboxSpec({ policy, spec });
        if (!r.ok) {
          rejected++;
          assertNamed(r.violations);
        }
      }),
      { seed: SEED + 1, numRuns: RUNS },
    );
    expect(rejected).toBeGreaterThan(RUNS / 10);
  });

  it('policy + spec pairs through explain and the text parser: never throw', () => {
    fc.assert(
      fc.property(
        mutated(policyArb),
        specArb.map(clean),
        fc.string({ maxLength: 200 }),
        (doc, spec, text) => {
          const v = validatePolicy(doc);
          const verdicts = explainPlacement(spec, [
            {
              runnerId: 'r',
              policy: v.ok ? v.policy : null,
              capabilities: {
                isolation: 'namespaces',
                egressRuleKinds: ['cidr'],
                ingressRuleKinds: [],
                supportsEgress: false,
                runtimeClasses: [],
                gpuTypes: [],
                architectures: [],
                instanceTypes: [],
                storageMedia: ['STORAGE_MEDIUM_DISK'],
                supportsPrivileged: false,
                images: [],
                specFeatures: [],
              },
            },
          ]);
          expect(verdicts).toHaveLength(1);
          if (!verdicts[0]?.admitted) assertNamed(verdicts[0]?.violations ?? []);
          const parsed = parsePolicyDocument(text);
          if (!parsed.ok) assertNamed(parsed.violations);
          expect(() =>
            checkProfileTemplate(doc, {
              bindingIndex: 0,
              templateId: 't',
              allowPrivilegedProfileAnnotations: false,
            }),
          ).not.toThrow();
        },
      ),
      { seed: SEED + 2, numRuns: Math.ceil(RUNS / 5) },
    );
  });
});
