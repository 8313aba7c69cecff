import { FULL_CAPABILITIES } from '@paddock/contracts';
import {
  compilePolicy,
  explainPlacement,
  resolveSandboxSpec,
  validatePolicy,
  violationsCommonToAll,
} from '../src/index';

describe('explainPlacement', () => {
  it('reports every runner, admitted or not, and what failed everywhere', () => {
    const small = validatePolicy({ constraints: { resources: { maxCpu: '2' } } });
    const tiny = validatePolicy({
      constraints: { resources: { maxCpu: '1' }, image: { allowedRegistries: ['ghcr.io/acme'] } },
    });
    if (!small.ok || !tiny.ok) throw new Error('policies');
    const spec = { containers: [{ image: 'python:3.12', resources: { cpu: '4' } }] };
    const verdicts = explainPlacement(spec, [
      { runnerId: 'small', policy: small.policy, capabilities: FULL_CAPABILITIES },
      { runnerId: 'tiny', policy: tiny.policy, capabilities: FULL_CAPABILITIES },
    ]);
    expect(verdicts.map((v) => [v.runnerId, v.admitted])).toEqual([
      ['small', false],
      ['tiny', false],
    ]);
    expect(verdicts[1]?.violations.map((v) => v.rule).sort()).toEqual([
      'allowed_registries',
      'max_cpu',
    ]);
    expect(violationsCommonToAll(verdicts)).toEqual([
      { field: 'containers[0].resources.cpu', rule: 'max_cpu' },
    ]);
    const open = explainPlacement(spec, [
      { runnerId: 'open', policy: {}, capabilities: FULL_CAPABILITIES },
    ]);
    expect(open[0]?.admitted).toBe(true);
    expect(open[0]?.resolved?.containers[0]?.resources.requests.cpuMillis).toBe(4000);
    expect(violationsCommonToAll(open)).toEqual([]);
  });
});

describe('policy compilation cache', () => {
  it('decides identically for a policy object and an equal re-parsed copy', () => {
    const raw = { constraints: { resources: { maxCpu: '2', defaultCpu: '1' } } };
    const a = validatePolicy(raw);
    if (!a.ok) throw new Error('policy');
    const copy = JSON.parse(JSON.stringify(a.policy)) as typeof a.policy;
    expect(compilePolicy(copy)).toBe(compilePolicy(a.policy));
    const spec = { containers: [{ resources: { cpu: '3' } }] };
    expect(resolveSandboxSpec({ policy: copy, spec })).toEqual(
      resolveSandboxSpec({ policy: a.policy, spec }),
    );
  });

  it('never lets a consumer alter shared compiled values through a resolved spec', () => {
    const v = validatePolicy({
      constraints: { network: { defaultEgress: [{ cidr: { cidr: '10.0.0.0/8' } }] } },
    });
    if (!v.ok) throw new Error('policy');
    const r = resolveSandboxSpec({ policy: v.policy, spec: {} });
    if (!r.ok) throw new Error('resolve');
    expect(() => r.resolved.egress.rules.push({ any: true })).toThrow();
    const again = resolveSandboxSpec({ policy: v.policy, spec: {} });
    expect(again.ok && again.resolved.egress.rules).toEqual([{ cidr: { cidr: '10.0.0.0/8' } }]);
  });

  it('rejects an invalid policy passed straight to resolveSandboxSpec with policy-prefixed paths', () => {
    const r = resolveSandboxSpec({
      policy: { constraints: { resources: { maxCpu: 'nope' } } },
      spec: {},
    });
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.violations[0]).toMatchObject({
        field: 'policy.constraints.resources.maxCpu',
        rule: 'invalid_quantity',
      });
    }
  });
});

describe('validatePolicy reports structural and semantic errors together', () => {
  it('lists a type error and an unrelated bad CIDR in one answer', () => {
    const r = validatePolicy({
      constraints: {
        resources: { requireLimits: 'yes', maxCpu: 'lots' },
        network: { allowedEgress: [{ cidr: { cidr: '10.0.0.1/8' } }] },
      },
    });
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.violations.map((v) => `${v.field} ${v.rule}`).sort()).toEqual([
        'constraints.network.allowedEgress[0].cidr.cidr non_canonical_cidr',
        'constraints.resources.maxCpu invalid_quantity',
        'constraints.resources.requireLimits type',
      ]);
    }
  });
});
