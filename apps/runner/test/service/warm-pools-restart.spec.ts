import { mkdtempSync, statSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { WarmPoolInput } from '@paddock/contracts';
import { waitFor } from '@paddock/testing';
import { LocalBackend } from '../../src/backend/local';
import { startRunner, type RunningRunner } from '../../src/runner';
import { readTies } from '../../src/service/warm-ties';
import { BASE_IMAGE, ORG, quietLogger, startHarness, type Harness } from '../support/harness';

const requirements = {
  requests: { cpu: '50m', memory: '64Mi' },
  limits: { cpu: '1', memory: '256Mi' },
};
const TEMPLATE = {
  containers: [{ name: 'main', image: BASE_IMAGE, resourceRequirements: requirements }],
  maxLifetimeSeconds: 600,
};

describe('runner warm pools across a runner restart', () => {
  let h: Harness;
  let configDir: string;
  let configPath: string;
  let second: { runner: RunningRunner; backend: LocalBackend } | undefined;

  const writeConfig = (warmPools: WarmPoolInput[]): void => {
    const tmp = `${configPath}.tmp`;
    writeFileSync(
      tmp,
      JSON.stringify({
        revision: 1,
        policyEtag: 'etag-warm',
        policy: {
          constraints: { resources: { defaultCpu: '1', defaultMemory: '256Mi', maxCpu: '2' } },
        },
        warmPools,
      }),
    );
    renameSync(tmp, configPath);
  };
  const waitReady = (runner: RunningRunner, n: number): Promise<unknown> =>
    waitFor(() => runner.warmPools.status()[0]?.ready === n && runner.warmPools.memberIds('agents').length === n, {
      timeoutMs: 60_000,
      what: `pool agents at ${n} ready (status: ${JSON.stringify(runner.warmPools.status())})`,
    });

  beforeAll(async () => {
    configDir = mkdtempSync(join(tmpdir(), 'paddock-warm-restart-'));
    configPath = join(configDir, 'runner.json');
    writeConfig([{ name: 'agents', size: 2, template: TEMPLATE }]);
    h = await startHarness({
      configPath,
      heartbeatIntervalMs: 1_000,
      cpuMillis: 4_000,
      memoryBytes: 8 * 1024 ** 3,
      sandboxes: 20,
    });
  }, 60_000);

  afterAll(async () => {
    if (second) {
      await h.client.call('delete', { sandboxId: 'warm-adopt', organizationId: ORG, gracePeriodSeconds: 0 }).catch(() => undefined);
      writeConfig([]);
      await second.runner.configSettled();
      await waitFor(() => second?.runner.warmPools.held().sandboxes === 0, {
        timeoutMs: 30_000,
      }).catch(() => undefined);
      await second.runner.stop();
    }
    if (h) {
      await h.runner.stop();
      await h.nc.drain();
      await h.nats.stop();
      const cg = h.backend.cgroupTree();
      for (const id of cg.listSandboxes()) await cg.killAndRemove(id);
      cg.removeRunnerTree();
      rmSync(h.stateDir, { recursive: true, force: true });
    }
    rmSync(configDir, { recursive: true, force: true });
  });

  it("adopts a taken warm sandbox under its create's id with the create's env, labels and lifetime; reaps the idle ones and refills", async () => {
    await waitReady(h.runner, 2);
    await h.client.call('create', {
      sandboxId: 'warm-adopt',
      organizationId: ORG,
      labels: { team: 'agents' },
      spec: {
        containers: [
          {
            name: 'main',
            image: BASE_IMAGE,
            resourceRequirements: requirements,
            environmentVariables: { GREETING: 'kept across the restart' },
          },
        ],
        maxLifetimeSeconds: 120,
      },
    });
    await h.waitState('warm-adopt', 'STATE_RUNNING');
    const warmId = h.runner.warmPools.warmIdOf('warm-adopt') as string;
    expect(warmId).toBeDefined();
    const journal = join(h.stateDir, 'warm-taken.jsonl');
    const tie = readTies(journal).get(warmId);
    expect(tie?.sandboxId).toBe('warm-adopt');
    expect(tie?.env.GREETING).toBe('kept across the restart');
    expect(statSync(journal).mode & 0o777).toBe(0o600);
    const deadlineBefore = h.runner.service.get({
      sandboxId: 'warm-adopt',
      organizationId: ORG,
    }).status;
    // The pool refills behind the take; these idle members are what the restart must reap.
    await waitReady(h.runner, 2);
    const idle = h.runner.warmPools.memberIds('agents');

    // The runner process goes (its sandboxes keep running), and a new one starts on the same state dir.
    await h.runner.stop({ keepBackend: true });
    await h.backend.close();
    const backend = new LocalBackend({ runnerId: h.runnerId, stateDir: h.stateDir });
    const runner = await startRunner({
      natsUrl: h.nats.url,
      ...(h.nats.auth ? { natsCredsFile: await h.nats.credsFile('runner', h.runnerId) } : {}),
      backend,
      identity: { runnerId: h.runnerId, organizationId: ORG },
      configPath,
      heartbeatIntervalMs: 1_000,
      capacity: { cpuMillis: 4_000, memoryBytes: 8 * 1024 ** 3, sandboxes: 20 },
      caps: { pidsMax: 512, diskBytes: 1024 ** 3, openFilesMax: 4096 },
      streamIdleTimeoutMs: 30_000,
      log: quietLogger,
      configPollMs: 200,
    });
    second = { runner, backend };

    expect(runner.recovery.adopted).toEqual(['warm-adopt']);
    expect(runner.warmPools.warmIdOf('warm-adopt')).toBe(warmId);
    const got = (await h.client.call('get', { sandboxId: 'warm-adopt', organizationId: ORG })).sandbox;
    expect(got.status.state).toBe('STATE_RUNNING');
    expect(got.labels).toEqual({ team: 'agents' });
    expect(got.status.effectiveMaxLifetimeSeconds).toBe(120);
    expect(got.status.createTime).toBe(deadlineBefore.createTime);
    const r = await h.client.call('exec', {
      sandboxId: 'warm-adopt',
      organizationId: ORG,
      argv: ['sh', '-c', 'echo "$GREETING|$HOSTNAME"'],
    });
    expect(Buffer.from(r.stdoutBase64, 'base64').toString()).toBe('kept across the restart|warm-adopt\n');
    // It holds the create's capacity again; the pool holds only its own new members.
    expect(runner.service.capacity()).toMatchObject({ sandboxesRunning: 1 });

    // The idle members of the previous runner were nobody's: reaped, and the pool refilled with new ones.
    await waitFor(() => idle.every((id) => !backend.cgroupTree().listSandboxes().includes(id)), {
      timeoutMs: 20_000,
      what: 'the idle warm sandboxes reaped',
    });
    await waitReady(runner, 2);
    expect(runner.warmPools.memberIds('agents').some((id) => idle.includes(id))).toBe(false);

    // Its end goes out under the create's id, and its tie goes with it.
    await h.client.call('delete', {
      sandboxId: 'warm-adopt',
      organizationId: ORG,
      gracePeriodSeconds: 0,
    });
    const end = await waitFor(() => h.events.find((e) => e.sandboxId === 'warm-adopt' && (e.state === 'STATE_COMPLETED' || e.state === 'STATE_FAILED')), {
      timeoutMs: 15_000,
      what: 'warm-adopt ended',
    });
    expect(end.reason).toBe('STOPPED_BY_USER');
    await waitFor(() => !readTies(journal).has(warmId), { timeoutMs: 5_000, what: 'the tie ended' });
    expect(h.events.some((e) => e.sandboxId === warmId)).toBe(false);
  }, 180_000);
});
