import { PaddockError } from '@paddock/contracts';
import { PolicyHolder } from '../../src/policy/policy-holder';
import { SANDBOX_META_LABEL } from '../../src/service/launch-spec';
import { SandboxService, type RunnerLogger } from '../../src/service/sandbox-service';
import { MemoryBackend } from '../support/memory-backend';

const quiet: RunnerLogger = { info: () => undefined, warn: () => undefined, error: () => undefined };
const identity = { runnerId: 'r1', organizationId: 'org-1', clusterId: 'c1', zone: 'z1', runnerGroupId: 'default' };
const VALUE = 'hunter2-value-only-in-env';
const spec = {
  containers: [
    {
      name: 'main',
      image: 'local',
      environmentVariables: { PLAIN: 'p' },
      secretStores: [{ storeName: 'app', secrets: [{ path: 'db', envVar: 'DB_PASSWORD' }, { path: 'API_KEY' }] }],
    },
  ],
};
const delivered = [{ index: 0, env: { DB_PASSWORD: VALUE, API_KEY: 'k' } }];

function setup() {
  const backend = new MemoryBackend();
  const service = new SandboxService({
    backend,
    identity,
    policy: new PolicyHolder(),
    capacity: { cpuMillis: 64_000, memoryBytes: 64 * 1024 ** 3, sandboxes: 100 },
    caps: { pidsMax: 256, diskBytes: 1024 ** 3, openFilesMax: 1024 },
    publishState: () => undefined,
    clock: { now: () => new Date() },
    log: quiet,
  });
  return { backend, service };
}

async function refusal(p: Promise<unknown>): Promise<PaddockError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof PaddockError) return e;
    throw e;
  }
  throw new Error('expected a PaddockError');
}

describe('secret values delivered with a create', () => {
  it('reach the launch as env vars, named as secret, and stay out of the persisted metadata', async () => {
    const { service, backend } = setup();
    const sb = await service.create({ sandboxId: 'sb-s', organizationId: 'org-1', spec, secretEnv: delivered });
    const launch = backend.launches[0];
    expect(launch?.env).toEqual({ PLAIN: 'p', DB_PASSWORD: VALUE, API_KEY: 'k' });
    expect(launch?.secretEnvNames).toEqual(['DB_PASSWORD', 'API_KEY']);
    const meta = launch?.labels[SANDBOX_META_LABEL] ?? '';
    expect(meta).toContain('"storeName":"app"');
    expect(meta).not.toContain(VALUE);
    expect(JSON.stringify(sb)).not.toContain(VALUE);
    // A redelivered create (same spec, values resolved again) is the same sandbox.
    const again = await service.create({ sandboxId: 'sb-s', organizationId: 'org-1', spec, secretEnv: delivered });
    expect(again.sandboxId).toBe('sb-s');
    expect(backend.launches).toHaveLength(1);
  });

  it('refuses secrets mapped to a sidecar by name, since only the primary container receives values', async () => {
    const { service, backend } = setup();
    const withSidecar = {
      containers: [
        { ...spec.containers[0], primary: true },
        { name: 'side', image: 'local', secretStores: [{ storeName: 'app', secrets: [{ path: 'token', envVar: 'SIDE_TOKEN' }] }] },
      ],
    };
    const e = await refusal(service.create({ sandboxId: 'sb-side', organizationId: 'org-1', spec: withSidecar, secretEnv: [...delivered, { index: 1, env: { SIDE_TOKEN: 't' } }] }));
    expect(e.violations).toEqual([expect.objectContaining({ field: 'containers[1].secretStores', rule: 'runner_capability' })]);
    expect(backend.launches).toEqual([]);
  });

  it('refuses a create whose delivered values do not match the mappings, naming the container, and launches nothing', async () => {
    const { service, backend } = setup();
    const missing = await refusal(service.create({ sandboxId: 'sb-m', organizationId: 'org-1', spec }));
    expect(missing.violations.map((v) => v.field)).toEqual(['containers[0].secretStores']);
    const extra = await refusal(service.create({ sandboxId: 'sb-x', organizationId: 'org-1', spec, secretEnv: [{ index: 0, env: { ...delivered[0]?.env, MORE: 'm' } }] }));
    expect(extra.violations.map((v) => v.field)).toEqual(['containers[0].secretStores']);
    const malformed = await refusal(
      service.create({ sandboxId: 'sb-b', organizationId: 'org-1', spec: { containers: [{ name: 'main', image: 'local', secretStores: [{ storeName: 'app' }] }] } }),
    );
    expect(malformed.violations.map((v) => v.field)).toEqual(['containers[0].secretStores[0].secrets']);
    expect(JSON.stringify([missing.toBody(), extra.toBody()])).not.toContain(VALUE);
    expect(backend.launches).toEqual([]);
  });
});
