import { randomUUID } from 'node:crypto';
import { FULL_CAPABILITIES, type ManagedRunner, type RunnerHeartbeat, type RunnerInstallReport } from '@paddock/contracts';
import { api, type TestApp } from './app';

/** Creates a managed runner through the REST API on a fresh cluster; returns the API body. */
export async function createRunner(
  t: TestApp,
  runnerId: string,
  opts: { token?: string; zone?: string; spec?: Record<string, unknown>; policy?: Record<string, unknown> } = {},
): Promise<{ clusterId: string; body: ManagedRunner }> {
  const token = opts.token ?? t.adminToken;
  const zone = opts.zone ?? 'us-east-1';
  const cluster = await t.registerCluster(token, { name: `cluster-${runnerId}`, zone });
  const r = await api<ManagedRunner>(t, 'POST', '/v1/sandbox/managedRunners', {
    token,
    body: {
      identity: { runnerId, zone, clusterId: cluster.id },
      spec: { releaseChannel: 'RELEASE_CHANNEL_STABLE', ...opts.spec },
      policy: opts.policy ?? {},
    },
  });
  if (r.status !== 200) throw new Error(`creating runner ${runnerId} failed: ${r.status} ${r.text}`);
  return { clusterId: cluster.id, body: r.body };
}

/** A schema-valid heartbeat for a runner. */
export function heartbeat(
  t: { organizationId: string },
  runnerId: string,
  clusterId: string,
  extra: Partial<RunnerHeartbeat> = {},
): RunnerHeartbeat {
  const now = new Date().toISOString();
  return {
    runnerId,
    organizationId: t.organizationId,
    clusterId,
    zone: 'us-east-1',
    runnerGroupId: 'default',
    revision: 1,
    policyEtag: null,
    usingDefaultPolicy: true,
    backend: 'local',
    health: 'HEALTHY',
    capabilities: FULL_CAPABILITIES,
    capacity: { cpuMillisFree: 4000, memoryBytesFree: 8 * 2 ** 30, sandboxesRunning: 0, sandboxesMax: 10 },
    instanceId: randomUUID(),
    sequence: 1,
    startedAt: now,
    sentAt: now,
    intervalMs: 5000,
    ...extra,
  };
}

/** A schema-valid install report for a runner. */
export function installReport(
  t: { organizationId: string },
  runnerId: string,
  clusterId: string,
  extra: Partial<RunnerInstallReport> = {},
): RunnerInstallReport {
  return {
    runnerId,
    organizationId: t.organizationId,
    clusterId,
    installStatus: 'RUNNER_INSTALL_STATUS_READY',
    activeRevision: 1,
    installError: null,
    gone: false,
    controllerId: 'controller-test',
    fencingToken: 1,
    reportedAt: new Date().toISOString(),
    ...extra,
  };
}
