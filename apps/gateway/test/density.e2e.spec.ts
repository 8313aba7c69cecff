import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT, httpJson, waitFor } from '@paddock/testing';
import { specWith, useCluster } from './support/cluster';

/** The policy `pnpm start` declares its local runner with (scripts/start.mjs reads the same file). */
const EMBEDDED_RUNNER_POLICY: unknown = JSON.parse(readFileSync(join(REPO_ROOT, 'scripts', 'embedded-runner-policy.json'), 'utf8'));
const RUNNER_CPU_MILLIS = 2_000;
const SANDBOXES = 6;

interface View {
  sandboxId: string;
  status: { state: string; effectiveResourceRequirements?: { requests: { cpu: string; memory: string }; limits: { cpu: string; memory: string } }[] };
}

/**
 * Density through the gateway on the embedded default's policy: sandboxes that declare no
 * resources get small requests under a 1-CPU limit, the runner reserves only the requests, so a
 * 2-CPU runner holds more sandboxes than one CPU each would allow, and all of them run.
 */
describe('density: requests below limits through the gateway', () => {
  const cluster = useCluster({
    runnerIds: ['r-dense'],
    policies: { 'r-dense': EMBEDDED_RUNNER_POLICY },
    runnerEnv: { PADDOCK_CAPACITY_CPU_MILLIS: String(RUNNER_CPU_MILLIS), PADDOCK_CAPACITY_MEMORY_BYTES: String(4 * 1024 ** 3) },
  });

  it(`runs ${SANDBOXES} sandboxes on a 2-CPU runner (one CPU each would fit 2), each reserving its request`, async () => {
    const c = cluster();
    const ids: string[] = [];
    for (let i = 0; i < SANDBOXES; i++) {
      const created = await httpJson<{ sandboxId?: string; message?: string }>(c.gw.url, 'POST', '/v1/sandboxes', c.token, { spec: specWith() });
      expect(created.status, created.json.message).toBe(200);
      ids.push(created.json.sandboxId as string);
    }
    for (const id of ids) {
      const waited = await httpJson<View>(c.gw.url, 'GET', `/v1/sandboxes/${id}:wait?timeoutSeconds=60`, c.token);
      expect(waited.status).toBe(200);
      expect(waited.json.status.state).toBe('STATE_RUNNING');
      expect(waited.json.status.effectiveResourceRequirements?.[0]).toMatchObject({
        requests: { cpu: '50m', memory: '64Mi' },
        limits: { cpu: '1', memory: '512Mi' },
      });
    }
    // What the gateway places by: the runner's heartbeat capacity, counting requests only.
    const beat = await waitFor(
      () => {
        const hb = c.gw.registry.get('r-dense')?.heartbeat;
        return hb && hb.capacity.sandboxesRunning === SANDBOXES ? hb : undefined;
      },
      { timeoutMs: 20_000, what: `a heartbeat with ${SANDBOXES} sandboxes running` },
    );
    expect(beat.capacity.cpuMillisFree).toBe(RUNNER_CPU_MILLIS - SANDBOXES * 50);
    expect(beat.capacity.memoryBytesFree).toBe(4 * 1024 ** 3 - SANDBOXES * 64 * 1024 ** 2);
  }, 180_000);
});
