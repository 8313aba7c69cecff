import { readFileSync, readdirSync } from 'node:fs';
import { startPlatform, type Platform } from '@paddock/e2e/platform';
import { waitFor } from '@paddock/testing';

/** The runner `pnpm start` declares for this machine, and the one every Python test lands on. */
export const RUNNER_ID = 'local';

/**
 * The policy the suite gives that runner, as an admin would: small defaults (the suite runs many
 * sandboxes on 2 cores) and ceilings a request can break, so placement refusals are real ones.
 */
export const TEST_POLICY = {
  displayName: 'python client tests',
  constraints: {
    resources: { maxCpu: '2', maxMemory: '2Gi', defaultCpu: '250m', defaultMemory: '256Mi' },
    security: { allowPrivileged: false },
    metadata: { deniedAnnotationPrefixes: ['paddock.dev/'] },
  },
};

export interface PythonPlatform {
  platform: Platform;
  /** What a user of the Python client sets: the gateway's URL and a SANDBOX_USER key. */
  env: { PADDOCK_GATEWAY_URL: string; PADDOCK_API_KEY: string; PADDOCK_TEST_RUNNER_ID: string };
  stop(): Promise<void>;
}

interface ManagedRunner {
  installStatus: string;
  connectionStatus: string;
  etag: string;
}

interface Explain {
  verdicts: { runnerId: string; admitted: boolean | null; violations: { field: string; rule: string }[] }[];
}

/**
 * The platform as `pnpm start` runs it (control plane, gateway, a controller with the local
 * driver and the runner it deploys), with the test policy applied and a user key issued.
 */
export async function startPythonPlatform(): Promise<PythonPlatform> {
  const p = await startPlatform();
  try {
    await p.startController(RUNNER_ID, 'local', RUNNER_ID);
    const runner = async (): Promise<ManagedRunner> => (await p.cpApi<ManagedRunner>('GET', `/v1/sandbox/managedRunners/${RUNNER_ID}`)).json;
    await waitFor(
      async () => {
        const r = await runner();
        return r.installStatus === 'RUNNER_INSTALL_STATUS_READY' && r.connectionStatus === 'RUNNER_CONNECTION_STATUS_CONNECTED';
      },
      { timeoutMs: 120_000, what: 'default runner READY and CONNECTED' },
    );
    const patch = await p.cpApi('PATCH', `/v1/sandbox/managedRunners/${RUNNER_ID}?updateMask=policy`, { policy: TEST_POLICY, etag: (await runner()).etag });
    if (patch.status !== 200) throw new Error(`policy update failed: ${patch.status} ${JSON.stringify(patch.json)}`);
    // The gateway judges by a policy only once the runner's heartbeat says it applies it.
    await waitFor(
      async () => {
        const x = await p.gwApi<Explain>('POST', '/v1/sandboxes:explain', { spec: { containers: [{ resources: { cpu: '3' } }] } });
        const judged = x.json.verdicts?.some((v) => v.runnerId === RUNNER_ID && v.admitted === false && v.violations.some((f) => f.rule === 'max_cpu'));
        if (!judged) throw new Error(`explain says ${JSON.stringify(x.json)}`);
        return judged;
      },
      { timeoutMs: 60_000, intervalMs: 250, what: 'the gateway judging by the test policy' },
    );
    const issued = await p.cpApi<{ token: string }>('POST', '/v1/tokens', { name: 'python-client-tests', role: 'SANDBOX_USER' });
    if (issued.status !== 200 && issued.status !== 201) throw new Error(`token issue failed: ${issued.status} ${JSON.stringify(issued.json)}`);
    return {
      platform: p,
      env: { PADDOCK_GATEWAY_URL: p.gw.url, PADDOCK_API_KEY: issued.json.token, PADDOCK_TEST_RUNNER_ID: RUNNER_ID },
      stop: () => stopPlatform(p),
    };
  } catch (e) {
    await stopPlatform(p);
    throw e;
  }
}

/**
 * Pids of the runners the platform's controllers started: every process whose environment names
 * one of their state directories (unique temporary directories, so nothing else matches).
 */
function runnerPids(p: Platform): { pid: number; stateDir: string }[] {
  const out: { pid: number; stateDir: string }[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    for (const c of p.controllers) if (isOurRunner(Number(entry), c.stateDir)) out.push({ pid: Number(entry), stateDir: c.stateDir });
  }
  return out;
}

/** Whether `pid` is a runner started under `stateDir` (checked again before each signal). */
function isOurRunner(pid: number, stateDir: string): boolean {
  try {
    return readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').includes(`PADDOCK_CONTROLLER_STATE_DIR=${stateDir}`);
  } catch {
    return false;
  }
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

interface SandboxList {
  sandboxes?: { sandboxId: string }[];
}

/**
 * Stops the sandboxes a failed test may have left, then the platform, then its runners: they are
 * detached from their controller by design and their command line does not name the test's
 * directory, so the platform's own teardown does not reach them. Each is stopped by its pid.
 */
async function stopPlatform(p: Platform): Promise<void> {
  try {
    const live = await p.gwApi<SandboxList>('GET', '/v1/sandboxes?pageSize=100');
    await Promise.all((live.json.sandboxes ?? []).map((s) => p.gwApi('DELETE', `/v1/sandboxes/${s.sandboxId}?gracePeriodSeconds=0&allowMissing=true`)));
  } catch {
    // the gateway is already gone; removing the state directory stops what is left
  }
  await p.stop();
  // Found after the controllers stopped, so a runner one of them restarted meanwhile is included.
  const runners = runnerPids(p);
  for (const signal of ['SIGTERM', 'SIGKILL'] as const) {
    const alive = runners.filter((r) => isOurRunner(r.pid, r.stateDir));
    for (const r of alive) process.kill(r.pid, signal);
    for (let waited = 0; waited < 5_000 && alive.some((r) => isOurRunner(r.pid, r.stateDir)); waited += 50) await sleep(50);
  }
}
