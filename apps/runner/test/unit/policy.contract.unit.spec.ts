import { PaddockError } from '@paddock/contracts';
import { capabilitiesOf, compareWithFixture, loadGoldenFixtures, type FixtureDecision, type GoldenFixture } from '@paddock/policy/testing';
import { PolicyHolder } from '../../src/policy/policy-holder';
import { SandboxService } from '../../src/service/sandbox-service';
import { MemoryBackend } from '../support/memory-backend';

/**
 * The policy engine's golden fixtures through the runner's own adapter path: the config file's
 * policy goes through `PolicyHolder.apply`, the request through `SandboxService.create`. Proves
 * the runner decides exactly as the engine does ("identical everywhere", STYLE B.10).
 * snake_case fixtures exercise the Terraform/YAML spelling, which the runner never receives.
 */
const fixtures = loadGoldenFixtures().filter((f) => f.kind === 'resolve' && !f.snakeCase);

async function runnerDecide(f: GoldenFixture): Promise<FixtureDecision> {
  const policy = new PolicyHolder();
  const applied = policy.apply(f.policy, 'etag');
  if (!applied.ok) return { ok: false, violations: applied.violations.map((v) => ({ ...v, field: `policy.${v.field}` })) };
  const backend = new MemoryBackend();
  backend.caps = capabilitiesOf(f.capabilities);
  const resolved = policy.resolve(f.spec, backend.caps);
  const service = new SandboxService({
    backend,
    identity: { runnerId: 'r1', organizationId: 'org', clusterId: 'c', zone: 'z', runnerGroupId: 'default' },
    policy,
    capacity: { cpuMillis: Number.MAX_SAFE_INTEGER, memoryBytes: Number.MAX_SAFE_INTEGER, sandboxes: 10 },
    caps: { pidsMax: 64, diskBytes: 1024, openFilesMax: 64 },
    publishState: () => undefined,
    clock: { now: () => new Date() },
    log: { info: () => undefined, warn: () => undefined, error: () => undefined },
  });
  try {
    await service.create({ sandboxId: 'sb', organizationId: 'org', spec: f.spec });
    await backend.close();
    return { ok: true, violations: [], resolved: resolved.ok ? resolved.resolved : undefined };
  } catch (e) {
    await backend.close();
    if (e instanceof PaddockError && e.reason === 'CWSANDBOX_POLICY_VIOLATION') return { ok: false, violations: e.violations };
    throw e;
  }
}

describe('policy golden fixtures through the runner', () => {
  it('covers the resolve fixtures', () => {
    expect(fixtures.length).toBeGreaterThan(50);
  });

  it.each(fixtures.map((f) => [f.name, f] as const))('%s', async (_name, f) => {
    expect(compareWithFixture(f, await runnerDecide(f))).toEqual([]);
  });
});
