import { PaddockError } from '@paddock/contracts';
import { PolicyHolder } from '../../src/policy/policy-holder';
import { canonicalJson } from '../../src/service/sandbox-record';
import { requestFingerprint, SandboxService, type RunnerLogger } from '../../src/service/sandbox-service';
import { MemoryBackend } from '../support/memory-backend';

const quiet: RunnerLogger = { info: () => undefined, warn: () => undefined, error: () => undefined };
const identity = { runnerId: 'r1', organizationId: 'org-1', clusterId: 'c1', zone: 'z1', runnerGroupId: 'default' };
const spec = {
  containers: [{ name: 'main', image: 'local', resources: { cpu: '100m', memory: '64Mi' } }],
  maxLifetimeSeconds: 300,
};

function setup() {
  const backend = new MemoryBackend();
  const policy = new PolicyHolder();
  const service = new SandboxService({
    backend,
    identity,
    policy,
    capacity: { cpuMillis: 64_000, memoryBytes: 64 * 1024 ** 3, sandboxes: 100 },
    caps: { pidsMax: 256, diskBytes: 1024 ** 3, openFilesMax: 1024 },
    publishState: () => undefined,
    clock: { now: () => new Date() },
    log: quiet,
  });
  return { backend, policy, service };
}

/** The fields a refused create names (its violations). */
async function refusedFields(create: Promise<unknown>): Promise<string[]> {
  const err = await create.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(PaddockError);
  return (err as PaddockError).violations?.map((v) => v.field) ?? [];
}

describe('SandboxService admission of repeated specs', () => {
  it('fingerprints a request exactly as the canonical JSON of its organization, spec and labels', () => {
    const cases: { org: string; spec: unknown; labels: Record<string, string> }[] = [
      { org: 'org-1', spec, labels: {} },
      {
        org: 'org-"quoted"',
        spec: { z: 1, a: [{ y: null, b: 'é' }], '10': true, '9': false },
        labels: { '2': 'b', '10': 'a', team: 'x' },
      },
      { org: 'org-1', spec: undefined, labels: { a: '1' } },
    ];
    for (const c of cases) {
      const specJson = c.spec === undefined ? undefined : canonicalJson(c.spec);
      expect(requestFingerprint(c.org, specJson, c.labels)).toBe(canonicalJson({ organizationId: c.org, spec: c.spec, labels: c.labels }));
    }
  });

  it('admits the same spec again under the policy in force: a policy that now refuses it refuses it', async () => {
    const { service, policy } = setup();
    await service.create({ sandboxId: 'a-1', organizationId: 'org-1', spec });
    await service.create({ sandboxId: 'a-2', organizationId: 'org-1', spec, labels: { n: '2' } });
    expect(service.get({ sandboxId: 'a-2', organizationId: 'org-1' }).labels).toEqual({ n: '2' });
    expect(policy.apply({ constraints: { resources: { maxCpu: '50m' } } }, 'tight').ok).toBe(true);
    expect(await refusedFields(service.create({ sandboxId: 'a-3', organizationId: 'org-1', spec }))).toContain('containers[0].resources.cpu');
    // Back to the default: admitted again.
    policy.set(undefined, undefined);
    expect((await service.create({ sandboxId: 'a-4', organizationId: 'org-1', spec })).sandboxId).toBe('a-4');
  });

  it("admits the same spec again under the backend's capabilities in force", async () => {
    const { service, backend } = setup();
    await service.create({ sandboxId: 'c-1', organizationId: 'org-1', spec });
    backend.caps = { ...backend.caps, images: ['another-image'] };
    expect((await refusedFields(service.create({ sandboxId: 'c-2', organizationId: 'org-1', spec }))).some((f) => f.includes('image'))).toBe(true);
  });
});
