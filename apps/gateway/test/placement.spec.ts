import { FULL_CAPABILITIES, type Policy, type RunnerCapacity } from '@paddock/contracts';
import { resolveSandboxSpec, warmPoolKey } from '@paddock/policy';
import { planPlacement, violationsByRunner, type PlacementCandidate } from '../src/placement/placement';
import { RunnerRegistry } from '../src/runners/runner-registry';

const capacity = (free: number, cpu = 4000): RunnerCapacity => ({ cpuMillisFree: cpu, memoryBytesFree: 8 * 1024 ** 3, sandboxesRunning: 10 - free, sandboxesMax: 10 });
const small: Policy = { constraints: { resources: { maxCpu: '500m', maxMemory: '512Mi', defaultCpu: '250m', defaultMemory: '256Mi' } } };
const large: Policy = { constraints: { resources: { maxCpu: '2', maxMemory: '2Gi', defaultCpu: '500m', defaultMemory: '512Mi' } } };

function candidate(runnerId: string, policy: Policy | null, free = 5, extra: Partial<PlacementCandidate> = {}): PlacementCandidate {
  return { runnerId, health: 'HEALTHY', capabilities: FULL_CAPABILITIES, capacity: capacity(free), policy, placedSinceHeartbeat: 0, ...extra };
}
const spec = (cpu: string): Parameters<typeof planPlacement>[0] => ({ containers: [{ image: 'paddock/base', resources: { cpu, memory: '256Mi' } }] });

describe('planPlacement (pure)', () => {
  it('keeps only runners whose policy admits the spec, and names the failing constraint of the others', () => {
    const plan = planPlacement(spec('1'), [candidate('a-small', small), candidate('b-large', large)]);
    expect(plan.order).toEqual(['b-large']);
    const refused = plan.verdicts.find((v) => v.runnerId === 'a-small');
    expect(refused?.admitted).toBe(false);
    expect(refused?.violations.some((v) => v.field.includes('cpu'))).toBe(true);
    const flat = violationsByRunner(plan.verdicts);
    expect(flat.every((v) => v.constraint === 'a-small' && v.description.startsWith('runner a-small:'))).toBe(true);
  });

  it('prefers free capacity, counting what this gateway placed since the last heartbeat, then healthy over degraded', () => {
    expect(planPlacement(spec('250m'), [candidate('a', large, 2), candidate('b', large, 6)]).order).toEqual(['b', 'a']);
    expect(planPlacement(spec('250m'), [candidate('a', large, 5), candidate('b', large, 6, { placedSinceHeartbeat: 3 })]).order).toEqual(['a', 'b']);
    expect(planPlacement(spec('250m'), [candidate('a', large, 9, { health: 'DEGRADED' }), candidate('b', large, 1)]).order).toEqual(['b', 'a']);
  });

  it('prefers a runner with a warm sandbox ready for the spec over one with more free capacity', () => {
    const resolved = resolveSandboxSpec({ policy: large, spec: spec('250m'), capabilities: FULL_CAPABILITIES });
    if (!resolved.ok) throw new Error('the spec must resolve');
    const key = warmPoolKey(resolved.resolved);
    expect(planPlacement(spec('250m'), [candidate('a', large, 9), candidate('w', large, 1, { readyWarmKeys: [key] })]).order).toEqual(['w', 'a']);
    // A ready pool of another template is no reason to prefer the runner.
    expect(planPlacement(spec('500m'), [candidate('a', large, 9), candidate('w', large, 1, { readyWarmKeys: [key] })]).order).toEqual(['a', 'w']);
    // Health still comes first.
    expect(planPlacement(spec('250m'), [candidate('a', large, 9), candidate('w', large, 1, { readyWarmKeys: [key], health: 'DEGRADED' })]).order).toEqual(['a', 'w']);
  });

  it('tries runners of unknown policy after every admitting one, and narrows by runnerIds', () => {
    const plan = planPlacement(spec('250m'), [candidate('u', null, 9), candidate('s', small, 1), candidate('l', large, 1)]);
    expect(plan.order).toEqual(['l', 's', 'u']);
    expect(plan.verdicts.find((v) => v.runnerId === 'u')).toMatchObject({ admitted: null, note: 'policy-unknown' });
    const narrowed = planPlacement(spec('250m'), [candidate('s', small), candidate('l', large)], ['s']);
    expect(narrowed.candidates).toEqual(['s']);
    expect(narrowed.order).toEqual(['s']);
  });
});

describe('placement by the spec features runners declare', () => {
  it('skips a runner whose backend lacks a feature the spec uses, naming the field, and places on one that has it', () => {
    const probe: Parameters<typeof planPlacement>[0] = { containers: [{ image: 'paddock/base', startupProbe: { httpGet: { port: 8000 } } }] };
    const lacking = { ...FULL_CAPABILITIES, specFeatures: FULL_CAPABILITIES.specFeatures.filter((f) => f !== 'startupProbe') };
    const plan = planPlacement(probe, [candidate('a-local', large, 9, { capabilities: lacking }), candidate('b-full', large, 1)]);
    expect(plan.order).toEqual(['b-full']);
    const skipped = plan.verdicts.find((v) => v.runnerId === 'a-local');
    expect(skipped).toMatchObject({ admitted: false, violations: [{ field: 'containers[0].startupProbe', rule: 'runner_capability' }] });
    // Nowhere to go: the refusal names the field and the runner.
    const none = planPlacement(probe, [candidate('a-local', large, 9, { capabilities: lacking })]);
    expect(none.order).toEqual([]);
    expect(violationsByRunner(none.verdicts)).toEqual([
      expect.objectContaining({ field: 'containers[0].startupProbe', rule: 'runner_capability', constraint: 'a-local' }),
    ]);
  });
});

describe('RunnerRegistry', () => {
  const hb = (runnerId: string, sequence: number, intervalMs = 1000, organizationId = 'org') => ({
    runnerId,
    organizationId,
    clusterId: 'c',
    zone: 'z',
    runnerGroupId: 'default',
    revision: 1,
    policyEtag: 'e',
    usingDefaultPolicy: false,
    backend: 'local' as const,
    health: 'HEALTHY' as const,
    capabilities: FULL_CAPABILITIES,
    capacity: capacity(5),
    instanceId: 'i1',
    sequence,
    startedAt: '2026-01-01T00:00:00Z',
    sentAt: '2026-01-01T00:00:00Z',
    intervalMs,
  });

  it('treats a runner as a candidate within 3 intervals, as lost after 3 intervals plus the grace', () => {
    let now = 0;
    const reg = new RunnerRegistry(() => now, 0);
    reg.observe(hb('r1', 1));
    reg.observe(hb('r2', 1, 1000, 'other-org'));
    expect(reg.candidates('org').map((r) => r.heartbeat.runnerId)).toEqual(['r1']);
    now = 3000;
    expect(reg.isFresh('r1')).toBe(true);
    now = 3001;
    expect(reg.candidates('org')).toEqual([]);
    expect(reg.isLost('r1', 5000)).toBe(false);
    now = 8001;
    expect(reg.isLost('r1', 5000)).toBe(true);
    // Never heard of: lost only once the grace has passed since the gateway started.
    expect(reg.isLost('r-unknown', 9000)).toBe(false);
  });

  it('streams: a runner not heard of yet may be alive while the gateway is young; a known one while fresh', () => {
    let now = 0;
    const reg = new RunnerRegistry(() => now, 0);
    expect(reg.mayBeAlive('r-next')).toBe(true); // a restarted gateway before the first heartbeat
    now = 6001;
    expect(reg.mayBeAlive('r-next')).toBe(false);
    reg.observe(hb('r1', 1));
    expect(reg.mayBeAlive('r1')).toBe(true);
    now = 6001 + 3001;
    expect(reg.mayBeAlive('r1')).toBe(false);
  });

  it('ignores an out-of-order heartbeat of the same instance', () => {
    const reg = new RunnerRegistry(() => 0, 0);
    reg.observe(hb('r1', 5));
    reg.observe({ ...hb('r1', 4), health: 'UNHEALTHY' });
    expect(reg.get('r1')?.heartbeat.sequence).toBe(5);
  });
});
