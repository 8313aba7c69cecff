import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Sandbox } from '@paddock/sdk';
import { secretScanArgv, seedRunnerYaml, waitFor, type SecretScanReport } from '@paddock/testing';
import { platformSecrets, sh, startPlatform, type Platform } from '../src/platform';

/**
 * The product's documented journeys, black-box: the admin journey through `cwic`, the user journey
 * through the SDK and `cwic sandbox`, and the outage journeys (control plane down,
 * gateway down). Every process is the compiled app, as `pnpm start` runs it.
 */
const RUNNER_YAML = seedRunnerYaml('cks-prod');

/** The admitted big sandbox's command: an argument no other process on this machine has. */
const BIG_SLEEP = '7213';

/** How many processes of this machine run exactly `argv` (sandboxes share the host's /proc). */
function processesRunning(argv: string[]): number {
  const want = `${argv.join('\0')}\0`;
  let n = 0;
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, 'utf8') === want) n++;
    } catch {
      // the process ended while we looked
    }
  }
  return n;
}

interface Runner {
  installStatus: string;
  connectionStatus: string;
  etag: string;
  activeRevision: string;
  targetRevision: string;
  rolloutInProgress: boolean;
  policy: Record<string, unknown> | null;
}

describe('journeys', () => {
  let p: Platform;
  const sdkOpts = (): { baseUrl: string; apiKey: string } => ({ baseUrl: p.gw.url, apiKey: p.token });
  const runnerReady = async (id: string): Promise<boolean> => {
    const r = await p.cpApi<Runner>('GET', `/v1/sandbox/managedRunners/${id}`);
    return r.json.installStatus === 'RUNNER_INSTALL_STATUS_READY' && r.json.connectionStatus === 'RUNNER_CONNECTION_STATUS_CONNECTED';
  };

  beforeAll(async () => {
    p = await startPlatform();
    // What `pnpm start` does: a controller for this machine that declares the default runner.
    await p.startController('local', 'local', 'local');
    await p.startController('cks-prod', 'us-east-1');
    await waitFor(() => runnerReady('local'), { timeoutMs: 120_000, what: 'default runner READY and CONNECTED' });
    writeFileSync(join(p.workDir, 'runner.yaml'), RUNNER_YAML);
    const login = sh(p, `cwic auth login "$TOKEN" --control-plane-url ${p.cp.url} --gateway-url ${p.gw.url}`);
    expect(login.code).toBe(0);
  }, 400_000);

  afterAll(async () => {
    await p?.stop();
  });

  describe('admin journey (seeds)', () => {
    /** The sandbox admitted after the policy was raised; deleting the runner must stop it. */
    let bigSandboxId = '';

    it('cwic sandbox runner create prod-us-east-1 -f runner.yaml → describe until READY and CONNECTED', async () => {
      const c = sh(p, 'cwic sandbox runner create prod-us-east-1 -f runner.yaml');
      expect(c.stderr).toBe('');
      expect(c.code).toBe(0);
      await waitFor(
        () => {
          const d = sh(p, 'cwic sandbox runner describe prod-us-east-1');
          return d.stdout.includes('RUNNER_INSTALL_STATUS_READY') && d.stdout.includes('RUNNER_CONNECTION_STATUS_CONNECTED');
        },
        { timeoutMs: 120_000, intervalMs: 1000, what: 'prod-us-east-1 READY and CONNECTED' },
      );
    });

    it('switches the release channel with the one-line stdin patch', async () => {
      const r = sh(p, "echo 'spec: {release_channel: RELEASE_CHANNEL_RAPID}' | cwic sandbox runner edit prod-us-east-1 -f -");
      expect(r.code).toBe(0);
      const got = await p.cpApi<{ spec: { releaseChannel: string } }>('GET', '/v1/sandbox/managedRunners/prod-us-east-1');
      expect(got.json.spec.releaseChannel).toBe('RELEASE_CHANNEL_RAPID');
    });

    it('replaces the policy through the etag-pinned path and sees a concurrent edit rejected', async () => {
      expect(sh(p, "cwic sandbox runner get prod-us-east-1 -o json > runner.json && jq '.[0].policy' runner.json > policy.json").code).toBe(0);
      // A concurrent edit lands between our read and our write.
      const current = (await p.cpApi<Runner>('GET', '/v1/sandbox/managedRunners/prod-us-east-1')).json;
      const other = await p.cpApi('PATCH', '/v1/sandbox/managedRunners/prod-us-east-1?updateMask=policy', { policy: { ...current.policy, displayName: 'concurrent' }, etag: current.etag });
      expect(other.status).toBe(200);
      const ours = sh(p, `jq '.displayName = "mine"' policy.json > p2.json && cwic sandbox runner policy edit prod-us-east-1 -f p2.json --etag "$(jq -r '.[0].etag' runner.json)"`);
      expect(ours.code).toBe(4);
      expect(ours.stderr).toContain('failed_precondition: managed_runner.etag is stale; reload the runner and retry');
      expect((await p.cpApi<Runner>('GET', '/v1/sandbox/managedRunners/prod-us-east-1')).json.policy?.displayName).toBe('concurrent');
    });

    it('a sandbox asking for more than max_cpu is refused with the constraint named, then admitted after the policy is raised', async () => {
      // --runner-id implies the organization's own runners (SANDBOX_MODE_CKS), as the SDK's runnerIds do.
      const create = 'cwic sandbox create --runner-id prod-us-east-1 --cpu 6 --memory 256Mi --tag admin-journey';
      const refused = sh(p, create);
      expect(refused.code).toBe(4);
      expect(refused.stderr).toContain('constraints.resources.maxCpu');
      expect(refused.stderr).not.toContain('runner_ids_requires_cks');
      const raise = sh(p, `cwic sandbox runner get prod-us-east-1 -o json > r2.json && jq '.[0].policy | .constraints.resources.maxCpu = "8"' r2.json > raised.json && cwic sandbox runner policy edit prod-us-east-1 -f raised.json --etag "$(jq -r '.[0].etag' r2.json)"`);
      expect(raise.stderr).toBe('');
      expect(raise.code).toBe(0);
      // The controller rewrites the runner's config file, the runner applies it and its next
      // heartbeat carries the new policy etag; only then does the gateway judge by the new policy.
      await waitFor(
        async () => {
          const x = await Sandbox.explain({ mode: 'SANDBOX_MODE_CKS', containers: [{ name: 'main', resources: { cpu: '6', memory: '256Mi' } }] }, { ...sdkOpts(), runnerIds: ['prod-us-east-1'] });
          return x.verdicts.find((v) => v.runnerId === 'prod-us-east-1')?.admitted === true;
        },
        { timeoutMs: 60_000, intervalMs: 500, what: 'the gateway judging prod-us-east-1 by the raised policy' },
      );
      const admitted = sh(p, `${create} --wait -o name -- sleep ${BIG_SLEEP}`);
      expect(admitted.stderr).toBe('');
      expect(admitted.code).toBe(0);
      expect(admitted.stdout).toMatch(/^sandbox\/\S+\n$/);
      const sb = await Sandbox.fromId(admitted.stdout.trim().slice('sandbox/'.length), sdkOpts());
      bigSandboxId = sb.sandboxId;
      expect(sb.state).toBe('STATE_RUNNING');
      expect(sb.status.runnerId).toBe('prod-us-east-1');
      expect(sb.status.placement?.winner).toBe('prod-us-east-1');
    });

    it('upgrade → the new revision is rolled out', async () => {
      expect((await p.cpApi('POST', '/v1/sandbox/releases', { channel: 'RELEASE_CHANNEL_RAPID', version: '9.9.9', image: 'paddock/runner:9.9.9' })).status).toBe(200);
      const up = sh(p, 'cwic sandbox runner upgrade prod-us-east-1');
      expect(up.code).toBe(0);
      await waitFor(
        async () => {
          const r = (await p.cpApi<Runner>('GET', '/v1/sandbox/managedRunners/prod-us-east-1')).json;
          return r.activeRevision === r.targetRevision && !r.rolloutInProgress && r.installStatus === 'RUNNER_INSTALL_STATUS_READY';
        },
        { timeoutMs: 120_000, what: 'rollout' },
      );
    });

    it('delete --yes: the runner goes away and every sandbox on it stops', async () => {
      const before = await Sandbox.list({ ...sdkOpts(), runnerIds: ['prod-us-east-1'] });
      expect(before.map((s) => s.sandboxId)).toContain(bigSandboxId);
      expect(processesRunning(['sleep', BIG_SLEEP])).toBe(1);
      const d = sh(p, 'cwic sandbox runner delete prod-us-east-1 --yes');
      expect(d.code).toBe(0);
      await waitFor(async () => (await p.cpApi('GET', '/v1/sandbox/managedRunners/prod-us-east-1')).status === 404, { timeoutMs: 120_000, what: 'runner removed' });
      await waitFor(
        async () => {
          const left = await Sandbox.list({ ...sdkOpts(), runnerIds: ['prod-us-east-1'] });
          return left.length === 0;
        },
        { timeoutMs: 60_000, what: 'sandboxes of the deleted runner terminal' },
      );
      const stopped = await Sandbox.fromId(bigSandboxId, sdkOpts());
      // Reported by the decommissioning runner itself, not inferred later from missing heartbeats.
      expect(stopped.status).toMatchObject({ state: 'STATE_FAILED', stateReason: 'RUNNER_DELETED' });
      // Stopped for real, not only marked: its process is gone from this machine.
      expect(processesRunning(['sleep', BIG_SLEEP])).toBe(0);
    });
  });

  describe('user journey', () => {
    let sb: Sandbox;

    it('SDK: create → wait → exec → files → logs → stop', async () => {
      sb = await Sandbox.run({ containers: [{ name: 'main', command: ['/bin/sh', '-c', 'echo started; exec sleep 600'] }] }, sdkOpts());
      expect(sb.state).toBe('STATE_RUNNING');
      const r = await sb.exec(['echo', 'hello']).result();
      expect(r.exitCode).toBe(0);
      expect(r.stdoutText).toBe('hello\n');
      await sb.writeFile('/tmp/x.bin', Buffer.from([0, 1, 2, 255]));
      expect([...(await sb.readFile('/tmp/x.bin'))]).toEqual([0, 1, 2, 255]);
      const logs: string[] = [];
      for await (const e of sb.logs({ tailLines: 10 })) logs.push(e.data.toString());
      expect(logs.join('')).toContain('started');
    });

    it('a default sandbox reads none of the platform’s secrets: tokens, database URL, NATS server and every issued NATS user', async () => {
      const since = Date.now();
      const { needles, credsFiles } = platformSecrets(p);
      // Each runner's and each controller's.
      expect(credsFiles.length).toBeGreaterThanOrEqual(3);
      const box = await Sandbox.run({ containers: [{ name: 'main' }] }, sdkOpts());
      try {
        const r = await box.exec(secretScanArgv({ needles, since, absent: credsFiles })).result();
        expect(r.exitCode, r.stderrText).toBe(0);
        const report = JSON.parse(r.stdoutText) as SecretScanReport;
        expect(report.counts.environ).toBeGreaterThanOrEqual(2);
        expect(report.counts.files).toBeGreaterThan(10);
        expect(report.hits).toEqual([]);
        expect(report.present).toEqual([]);
      } finally {
        await box.stop();
      }
    });

    it('SDK: waitUntilComplete returns when the main command exits, whatever its code; a stopped sandbox raises unless told not to', async () => {
      const done = await Sandbox.run({ containers: [{ name: 'main', command: ['/bin/sh', '-c', 'sleep 0.3; exit 7'] }] }, sdkOpts());
      await done.waitUntilComplete({ timeoutMs: 60_000 });
      // A non-zero exit is the command's outcome: the sandbox FAILED with reason EXITED, and no error.
      expect(done.status).toMatchObject({ state: 'STATE_FAILED', stateReason: 'EXITED' });
      expect(done.returncode).toBe(7);

      const stopped = await Sandbox.run({ containers: [{ name: 'main', command: ['/bin/sh', '-c', 'exec sleep 600'] }] }, sdkOpts());
      await stopped.stop();
      await expect(stopped.waitUntilComplete({ timeoutMs: 60_000 })).rejects.toMatchObject({ reason: 'CWSANDBOX_SANDBOX_TERMINATED' });
      await stopped.waitUntilComplete({ timeoutMs: 60_000, raiseOnTermination: false });
      expect(stopped.status).toMatchObject({ state: 'STATE_COMPLETED', stateReason: 'STOPPED_BY_USER' });
    });

    it('cwic sandbox: exec streams output and returns the exit code; cp both ways; logs', () => {
      const id = sb.sandboxId;
      const e = sh(p, `cwic sandbox exec ${id} -- sh -c 'echo out; echo err >&2; exit 3'`);
      expect(e.code).toBe(3);
      expect(e.stdout).toBe('out\n');
      expect(e.stderr).toBe('err\n');
      writeFileSync(join(p.workDir, 'in.txt'), 'payload\n');
      expect(sh(p, `cwic sandbox cp in.txt ${id}:/tmp/in.txt`).code).toBe(0);
      expect(sh(p, `cwic sandbox cp ${id}:/tmp/in.txt -`).stdout).toBe('payload\n');
      expect(sh(p, `cwic sandbox logs ${id}`).stdout).toContain('started');
    });

    it('the control plane down: running sandboxes keep working through the gateway; runner edits fail cleanly', async () => {
      await p.cp.stop();
      try {
        const r = await sb.exec(['echo', 'still here']).result();
        expect(r.stdoutText).toBe('still here\n');
        const edit = sh(p, "echo 'spec: {release_channel: RELEASE_CHANNEL_STABLE}' | cwic sandbox runner edit local -f -");
        expect(edit.code).toBe(1);
        expect(edit.stderr).toMatch(/^Error: .*unavailable: cannot reach/);
      } finally {
        await p.restartControlPlane();
      }
    });

    it('the gateway down: configuration untouched; sandbox traffic resumes when it returns', async () => {
      const before = (await p.cpApi<Runner>('GET', '/v1/sandbox/managedRunners/local')).json;
      await p.gw.stop();
      try {
        const during = sh(p, `cwic sandbox exec ${sb.sandboxId} -- echo x`);
        expect(during.code).not.toBe(0);
        const after = (await p.cpApi<Runner>('GET', '/v1/sandbox/managedRunners/local')).json;
        expect(after.etag).toBe(before.etag);
        expect(after.policy).toEqual(before.policy);
      } finally {
        await p.restartGateway();
      }
      // A restarted gateway learns the runners again from their next heartbeat.
      const r = await waitFor(async () => sb.exec(['echo', 'back']).result(), { timeoutMs: 30_000, what: 'exec after the gateway returned' });
      expect(r.stdoutText).toBe('back\n');
      await sb.stop();
      expect(['STATE_COMPLETED', 'STATE_FAILED']).toContain((await sb.refresh()).status.state);
    });

    it('two runners with different policies: placement follows them', async () => {
      // The default runner takes small sandboxes only; a second runner, on the other cluster,
      // only big ones. Neither sandbox below names a runner.
      const small = sh(p, `printf 'display_name: small\nconstraints:\n  resources:\n    max_cpu: "2"\n' > small.yaml && cwic sandbox runner policy edit local -f small.yaml --etag "$(cwic sandbox runner get local -o json | jq -r '.[0].etag')"`);
      expect(small.stderr).toBe('');
      expect(small.code).toBe(0);
      writeFileSync(
        join(p.workDir, 'big.yaml'),
        `identity:\n  zone: us-east-1\n  cluster_name: cks-prod\nspec:\n  release_channel: RELEASE_CHANNEL_STABLE\npolicy:\n  display_name: big\n  constraints:\n    resources:\n      min_cpu: "3"\n      default_cpu: "4"\n      max_cpu: "8"\n`,
      );
      const c = sh(p, 'cwic sandbox runner create big-us-east-1 -f big.yaml');
      expect(c.stderr).toBe('');
      expect(c.code).toBe(0);
      await waitFor(() => runnerReady('big-us-east-1'), { timeoutMs: 120_000, intervalMs: 1000, what: 'big-us-east-1 READY and CONNECTED' });
      const spec = (cpu: string): { containers: { name: string; command: string[]; resources: { cpu: string; memory: string } }[] } => ({
        containers: [{ name: 'main', command: ['sleep', '600'], resources: { cpu, memory: '256Mi' } }],
      });
      // Both runners' heartbeats carry the etags of these policies before the gateway judges by them.
      await waitFor(
        async () => {
          const [one, six] = await Promise.all([Sandbox.explain(spec('1'), sdkOpts()), Sandbox.explain(spec('6'), sdkOpts())]);
          return one.order.join() === 'local' && six.order.join() === 'big-us-east-1';
        },
        { timeoutMs: 60_000, intervalMs: 500, what: 'the gateway judging both runners by their policies' },
      );

      const bigOne = sh(p, 'cwic sandbox create --cpu 6 --memory 256Mi --tag placement --wait -o name -- sleep 600');
      expect(bigOne.stderr).toBe('');
      expect(bigOne.code).toBe(0);
      const onBig = await Sandbox.fromId(bigOne.stdout.trim().slice('sandbox/'.length), sdkOpts());
      const smallOne = await Sandbox.run(spec('1'), sdkOpts());
      const onSmall = await Sandbox.fromId(smallOne.sandboxId, sdkOpts());

      for (const [sandbox, winner, loser, constraint] of [
        [onBig, 'big-us-east-1', 'local', 'constraints.resources.maxCpu'],
        [onSmall, 'local', 'big-us-east-1', 'constraints.resources.minCpu'],
      ] as const) {
        expect(sandbox.state).toBe('STATE_RUNNING');
        expect(sandbox.status.runnerId).toBe(winner);
        const placement = sandbox.status.placement;
        expect(placement?.winner).toBe(winner);
        expect(placement?.candidates.slice().sort()).toEqual(['big-us-east-1', 'local']);
        expect(placement?.verdicts.find((v) => v.runnerId === winner)?.admitted).toBe(true);
        const refused = placement?.verdicts.find((v) => v.runnerId === loser);
        expect(refused?.admitted).toBe(false);
        expect(refused?.violations.map((v) => v.description).join('\n')).toContain(constraint);
      }
      expect((await onBig.exec(['echo', 'big']).result()).stdoutText).toBe('big\n');
      expect((await onSmall.exec(['echo', 'small']).result()).stdoutText).toBe('small\n');
      await onBig.stop();
      await onSmall.stop();
    });
  });
});
