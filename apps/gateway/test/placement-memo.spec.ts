import { FULL_CAPABILITIES, type RunnerHeartbeat } from '@paddock/contracts';
import { createGatewayDb } from '../src/db/database';
import { PlacementService } from '../src/placement/placement.service';
import { PolicySource } from '../src/runners/policy-source';
import { RunnerRegistry } from '../src/runners/runner-registry';

const heartbeat = (sequence: number, capabilities = FULL_CAPABILITIES): RunnerHeartbeat => ({
  runnerId: 'r1',
  organizationId: 'org',
  clusterId: 'c',
  zone: 'z',
  runnerGroupId: 'default',
  revision: 1,
  policyEtag: null,
  // The default policy needs no database read: this test's database is never connected to.
  usingDefaultPolicy: true,
  backend: 'local',
  health: 'HEALTHY',
  capabilities,
  capacity: { cpuMillisFree: 4000, memoryBytesFree: 8 * 1024 ** 3, sandboxesRunning: 0, sandboxesMax: 10 },
  instanceId: 'i1',
  sequence,
  startedAt: '2026-01-01T00:00:00Z',
  sentAt: '2026-01-01T00:00:00Z',
  intervalMs: 60_000,
});

const probe = { containers: [{ image: 'paddock/base', startupProbe: { httpGet: { port: 8000 } } }] };
const lacking = { ...FULL_CAPABILITIES, specFeatures: FULL_CAPABILITIES.specFeatures.filter((f) => f !== 'startupProbe') };

describe('PlacementService: remembered verdicts', () => {
  const db = createGatewayDb('postgres://unused@127.0.0.1:1/unused');
  afterAll(() => db.destroy());

  it('gives the same plan from memory, and judges again once the runner declares other capabilities', async () => {
    const registry = new RunnerRegistry();
    const svc = new PlacementService(registry, new PolicySource(db));
    registry.observe(heartbeat(1));
    const first = await svc.plan('org', probe, {}, 'fp-probe');
    expect(first.order).toEqual(['r1']);
    // A new heartbeat with the same capabilities: the verdict stands.
    registry.observe(heartbeat(2));
    expect(await svc.plan('org', probe, {}, 'fp-probe')).toEqual(first);
    // The runner lost the feature: the remembered admission must not be used.
    registry.observe(heartbeat(3, lacking));
    const after = await svc.plan('org', probe, {}, 'fp-probe');
    expect(after.order).toEqual([]);
    expect(after.verdicts[0]).toMatchObject({ admitted: false, violations: [{ field: 'containers[0].startupProbe', rule: 'runner_capability' }] });
    // And the plan without a spec key (explain) agrees.
    expect((await svc.plan('org', probe, {})).verdicts).toEqual(after.verdicts);
  });
});
