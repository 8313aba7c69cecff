import type { NatsConnection } from '@nats-io/transport-node';
import { subjects } from '@paddock/contracts';
import type { ServiceLogger } from '@paddock/kit';
import { waitFor } from '@paddock/testing';
import type { RunningGateway } from '../../src/app';
import { startGateway, startInfra, type Infra } from './infra';
import { startRunner, type RunnerProcess } from './runners';

/** Image every test sandbox uses (the local backend's image map). */
export const IMAGE = 'paddock/base';

/**
 * Three runners of one organization with different postures:
 * - `r-small`: at most 500m / 512Mi (defaults 250m / 256Mi)
 * - `r-medium`: at most 1 CPU / 1Gi
 * - `r-large`: at most 2 CPU / 2Gi, and denies `team.example/` annotations
 */
export const POLICIES: Record<string, unknown> = {
  'r-small': { constraints: { resources: { maxCpu: '500m', maxMemory: '512Mi', defaultCpu: '250m', defaultMemory: '256Mi' } } },
  'r-medium': { constraints: { resources: { maxCpu: '1', maxMemory: '1Gi', defaultCpu: '500m', defaultMemory: '512Mi' } } },
  'r-large': {
    constraints: {
      resources: { maxCpu: '2', maxMemory: '2Gi', defaultCpu: '500m', defaultMemory: '512Mi' },
      metadata: { deniedAnnotationPrefixes: ['team.example/'] },
    },
  },
};

export interface Cluster {
  infra: Infra;
  gw: RunningGateway;
  orgId: string;
  token: string;
  runners: Map<string, RunnerProcess>;
  nc: NatsConnection;
  startRunner(id: string): Promise<RunnerProcess>;
  stop(): Promise<void>;
}

export async function startCluster(
  opts: {
    runnerIds?: string[];
    gatewayEnv?: Record<string, string>;
    policies?: Record<string, unknown>;
    sandboxCapacity?: Record<string, number>;
    runnerEnv?: Record<string, string>;
    controlPlaneEnv?: Record<string, string>;
    /** The gateway logs here instead of stdout. */
    gatewayLog?: ServiceLogger;
  } = {},
): Promise<Cluster> {
  const policies = { ...POLICIES, ...opts.policies };
  const infra = await startInfra(opts.controlPlaneEnv ? { controlPlaneEnv: opts.controlPlaneEnv } : {});
  const gw = await startGateway(infra, opts.gatewayEnv, opts.gatewayLog);
  const orgId = infra.cp.organizationId;
  const { token } = await infra.cp.issueToken('SANDBOX_USER');
  const nc = await infra.nats.connectHarness();
  const runners = new Map<string, RunnerProcess>();
  const start = async (id: string): Promise<RunnerProcess> => {
    const policy = policies[id] ?? {};
    const policyEtag = await infra.cp.declareRunner(id, policy);
    const previous = runners.get(id);
    const capacitySandboxes = opts.sandboxCapacity?.[id];
    const r = startRunner({
      runnerId: id,
      organizationId: orgId,
      nats: await infra.nats.env('runner', id),
      policy,
      policyEtag,
      dir: previous?.dir,
      ...(capacitySandboxes !== undefined ? { capacitySandboxes } : {}),
      ...(opts.runnerEnv ? { env: opts.runnerEnv } : {}),
    });
    runners.set(id, r);
    await waitFor(() => gw.registry.isFresh(id), { timeoutMs: 150_000, intervalMs: 100, what: `runner ${id} heartbeat (${r.output().slice(-500)})` });
    return r;
  };
  await Promise.all((opts.runnerIds ?? Object.keys(policies)).map(start));
  return {
    infra,
    gw,
    orgId,
    token,
    runners,
    nc,
    startRunner: start,
    async stop() {
      // Sandboxes outlive runner processes by design: stop them all so nothing leaks on the host.
      await stopAllSandboxes(nc, orgId, [...runners.keys()]).catch(() => undefined);
      await gw.close();
      await Promise.all([...runners.values()].map((r) => r.stop()));
      await nc.close();
      await infra.stop();
    },
  };
}

/**
 * One cluster for a whole test file (call it inside `describe`): started before its tests,
 * stopped after them. Each test takes it with the returned getter.
 */
export function useCluster(opts: Parameters<typeof startCluster>[0] = {}): () => Cluster {
  let cluster: Cluster | undefined;
  beforeAll(async () => {
    cluster = await startCluster(opts);
  }, 300_000);
  afterAll(async () => {
    await cluster?.stop();
  });
  return () => {
    if (!cluster) throw new Error('the cluster did not start (see beforeAll)');
    return cluster;
  };
}

/** A sandbox spec for the test image with the given resources. */
export function specWith(cpu?: string, memory?: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const resources = cpu || memory ? { resources: { ...(cpu ? { cpu } : {}), ...(memory ? { memory } : {}) } } : {};
  return { containers: [{ image: IMAGE, ...resources }], ...extra };
}

/** Every sandbox id each runner currently runs (non-terminal), asked over raw NATS. */
export async function runnerInventory(nc: NatsConnection, orgId: string, runnerIds: string[]): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  for (const id of runnerIds) {
    const msg = await nc.request(subjects.runnerRpc(id, 'list'), JSON.stringify({ organizationId: orgId, showTerminated: false }), { timeout: 5000 });
    const reply = msg.json<{ ok: boolean; result?: { sandboxes: { sandboxId: string }[] } }>();
    if (!reply.ok || !reply.result) throw new Error(`list on ${id} failed: ${msg.string()}`);
    out.set(id, reply.result.sandboxes.map((s) => s.sandboxId));
  }
  return out;
}

async function stopAllSandboxes(nc: NatsConnection, orgId: string, runnerIds: string[]): Promise<void> {
  const inv = await runnerInventory(nc, orgId, runnerIds);
  await Promise.all(
    [...inv].flatMap(([runnerId, ids]) =>
      ids.map((sandboxId) =>
        nc.request(subjects.runnerRpc(runnerId, 'delete'), JSON.stringify({ sandboxId, organizationId: orgId, allowMissing: true }), { timeout: 5000 }),
      ),
    ),
  );
}
