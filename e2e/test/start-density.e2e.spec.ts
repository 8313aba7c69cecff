import { availableParallelism } from 'node:os';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT, httpJson } from '@paddock/testing';
import { prepareStart, startPaddock, type StartSetup } from '../src/pnpm-start';

const SANDBOXES = 30;

interface View {
  sandboxId: string;
  status: { state: string; message?: string; effectiveResourceRequirements?: { requests: { cpu: string }; limits: { cpu: string } }[] };
}

/**
 * The embedded default packs: `pnpm start` declares its runner with small requests under a limit,
 * so this 2-vCPU machine runs dozens of idle sandboxes at once (one CPU each would fit two).
 */
describe('pnpm start: dozens of idle sandboxes on a laptop', () => {
  let setup: StartSetup;
  beforeAll(async () => {
    setup = await prepareStart('paddock_start_density');
  }, 300_000);
  afterAll(async () => {
    await setup?.cleanup();
  });

  it(`declares its runner with the embedded policy and runs ${SANDBOXES} sandboxes at once`, async () => {
    const started = await startPaddock(setup);
    try {
      const token = /admin token\s+(\S+)/.exec(started.output())?.[1] as string;
      expect(token).toMatch(/^pdk_/);
      const runner = await httpJson<{ policy: unknown; usingDefaultPolicy: boolean }>(setup.cpUrl, 'GET', '/v1/sandbox/managedRunners/local', token);
      const embedded: unknown = JSON.parse(readFileSync(join(REPO_ROOT, 'scripts', 'embedded-runner-policy.json'), 'utf8'));
      expect(runner.json.policy).toEqual(embedded);
      expect(runner.json.usingDefaultPolicy).toBe(false);
      // More than the machine's CPUs would allow at one CPU per sandbox.
      expect(SANDBOXES).toBeGreaterThan(availableParallelism());

      const ids = await Promise.all(
        Array.from({ length: SANDBOXES }, async () => {
          const r = await httpJson<{ sandboxId?: string; message?: string }>(setup.gwUrl, 'POST', '/v1/sandboxes', token, {
            spec: { containers: [{ image: 'paddock/base' }] },
          });
          expect(r.status, r.json.message).toBe(200);
          return r.json.sandboxId as string;
        }),
      );
      for (const id of ids) {
        const waited = await httpJson<View>(setup.gwUrl, 'GET', `/v1/sandboxes/${id}:wait?timeoutSeconds=60`, token);
        expect(waited.status, JSON.stringify(waited.json)).toBe(200);
        expect(waited.json.status.state, waited.json.status.message).toBe('STATE_RUNNING');
        expect(waited.json.status.effectiveResourceRequirements?.[0]).toMatchObject({ requests: { cpu: '50m' }, limits: { cpu: '1' } });
      }
      const listed = await httpJson<{ sandboxes: View[] }>(setup.gwUrl, 'GET', '/v1/sandboxes?pageSize=100', token);
      expect(listed.json.sandboxes.filter((s) => ids.includes(s.sandboxId) && s.status.state === 'STATE_RUNNING')).toHaveLength(SANDBOXES);
    } finally {
      // Ctrl-C stops the runner and every sandbox it started.
      await started.stop();
    }
  }, 420_000);
});
