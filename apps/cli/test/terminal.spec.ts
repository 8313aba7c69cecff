import { spawn } from 'node:child_process';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { NatsConnection } from '@nats-io/transport-node';
import { FULL_CAPABILITIES, subjects } from '@paddock/contracts';
import { waitFor } from '@paddock/testing';
import { sh, startPlatform, type Platform } from './support/platform';
import { TmuxSession } from './support/tmux';

/**
 * What needs a real terminal: `auth login` with the token typed at a hidden prompt,
 * the `create` and `edit` wizards (prompts, then `$EDITOR`, then confirmation), and the progress
 * line of a long wait, which must show on a terminal and stay out of pipes.
 */

interface Runner {
  identity: { runnerId: string; zone: string; clusterId: string };
  spec: { releaseChannel: string; maintenancePolicy: { windows: { cron: string; durationSeconds: number }[] } };
  policy: { displayName?: string; constraints?: { resources?: Record<string, unknown> } } | null;
  connectionStatus: string;
}

describe('cwic through a real terminal (tmux)', () => {
  let p: Platform;
  let nc: NatsConnection;
  let organizationId: string;
  const clusters: Record<string, string> = {};
  const sessions: TmuxSession[] = [];

  const tmux = (script: string, env: NodeJS.ProcessEnv = {}): TmuxSession => {
    const s = TmuxSession.start(script, { ...p.shellEnv, TERM: 'xterm-256color', ...env }, p.workDir);
    sessions.push(s);
    return s;
  };
  const runner = async (id: string): Promise<Runner> => (await p.api<Runner>('GET', `/v1/sandbox/managedRunners/${id}`)).json;

  /** Publishes heartbeats for the runner (as its process would) until the control plane marks it CONNECTED. */
  const connectRunner = async (runnerId: string, cluster: string): Promise<void> => {
    await waitFor(async () => {
      const now = new Date().toISOString();
      nc.publish(
        subjects.runnerHeartbeat(runnerId),
        JSON.stringify({
          runnerId, organizationId, clusterId: clusters[cluster], zone: 'us-east-1', runnerGroupId: 'default', revision: 1, policyEtag: null,
          usingDefaultPolicy: false, backend: 'kubernetes', health: 'HEALTHY', capabilities: FULL_CAPABILITIES,
          capacity: { cpuMillisFree: 1000, memoryBytesFree: 1e9, sandboxesRunning: 0, sandboxesMax: 10 },
          instanceId: 'i1', sequence: 1, startedAt: now, sentAt: now, intervalMs: 5000,
        }),
      );
      await nc.flush();
      return (await runner(runnerId)).connectionStatus === 'RUNNER_CONNECTION_STATUS_CONNECTED';
    }, { timeoutMs: 30_000, intervalMs: 500, what: `${runnerId} CONNECTED` });
  };

  beforeAll(async () => {
    p = await startPlatform();
    nc = await p.nats.connectHarness();
    organizationId = (await p.api<{ organization: { id: string } }>('GET', '/v1/auth/whoami')).json.organization.id;
    for (const [name, zone] of [['cks-a', 'us-east-1'], ['cks-b', 'eu-west-1'], ['cks-c', 'us-east-1'], ['cks-d', 'us-east-1']] as const) {
      const c = await p.api<{ id: string }>('POST', '/v1/clusters', { name, zone });
      expect(c.status).toBeLessThan(300);
      clusters[name] = c.json.id;
    }
  }, 120_000);

  afterAll(async () => {
    for (const s of sessions) s.kill();
    await nc?.drain();
    await p?.stop();
  });

  it('cwic auth login prompts for the token without echoing it and stores it with mode 0600', async () => {
    const s = tmux(`cwic auth login --control-plane-url ${p.cpUrl}`);
    await s.waitForText('Paste your Paddock API token:');
    s.type(p.token);
    expect(await s.exitCode()).toBe(0);
    const screen = s.screen();
    expect(screen).toContain('Logged in to');
    expect(screen).not.toContain(p.token);
    const file = join(p.workDir, 'config', 'cwic', 'config.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toMatchObject({ token: p.token, controlPlaneUrl: p.cpUrl });
    // No environment variable needed afterwards.
    const who = sh(p, 'env -u TOKEN cwic auth whoami');
    expect(who.code).toBe(0);
    expect(who.stdout).toContain('SANDBOX_ADMIN');
  });

  it('cwic sandbox runner create RUNNER-ID: cluster, channel, window, $EDITOR, confirmation', async () => {
    // The "editor" changes the pre-filled policy non-interactively, as a user would in vi.
    const s = tmux('cwic sandbox runner create wiz-1', { EDITOR: "sed -i 's/display_name: default/display_name: from-editor/'" });
    const picker = await s.waitForText('Cluster [1]:');
    expect(picker).toMatch(/cks-b\s+eu-west-1/);
    const row = /(\d+)\s+cks-b\s/.exec(picker);
    s.type(row?.[1] ?? '');
    await s.waitForText('Release channel (STABLE/RAPID) [STABLE]:');
    s.type('RAPID');
    await s.waitForText('Maintenance window cron in UTC');
    s.type('0 3 * * SUN');
    await s.waitForText('Window duration in seconds [14400]:');
    s.type('7200');
    await s.waitForText('Create runner wiz-1 on cluster cks-b? [y/N]');
    s.type('y');
    expect(await s.exitCode()).toBe(0);
    expect(s.screen()).toContain('runner/wiz-1 created');
    const r = await runner('wiz-1');
    expect(r.identity).toMatchObject({ runnerId: 'wiz-1', zone: 'eu-west-1', clusterId: clusters['cks-b'] });
    expect(r.spec.releaseChannel).toBe('RELEASE_CHANNEL_RAPID');
    expect(r.spec.maintenancePolicy.windows).toEqual([{ cron: '0 3 * * SUN', durationSeconds: 7200 }]);
    expect(r.policy?.displayName).toBe('from-editor');
  });

  it('the create wizard aborts on "n" and creates nothing (exit 2)', async () => {
    const s = tmux('cwic sandbox runner create wiz-no', { EDITOR: 'true' });
    await s.waitForText('Cluster [1]:');
    s.type('');
    await s.waitForText('Release channel');
    s.type('');
    await s.waitForText('Maintenance window cron');
    s.type('');
    await s.waitForText('[y/N]');
    s.type('n');
    expect(await s.exitCode()).toBe(2);
    expect(s.screen()).toContain('Error: aborted');
    expect((await p.api('GET', '/v1/sandbox/managedRunners/wiz-no')).status).toBe(404);
  });

  it('cwic sandbox runner edit RUNNER-ID: $EDITOR over settings and policy; only what changed is sent', async () => {
    const before = await runner('wiz-1');
    const s = tmux('cwic sandbox runner edit wiz-1', {
      EDITOR: "sed -i -e 's/RELEASE_CHANNEL_RAPID/RELEASE_CHANNEL_STABLE/' -e 's/max_cpu: \"4\"/max_cpu: \"6\"/'",
    });
    expect(await s.exitCode()).toBe(0);
    expect(s.screen()).toContain('runner/wiz-1 updated');
    const after = await runner('wiz-1');
    expect(after.spec.releaseChannel).toBe('RELEASE_CHANNEL_STABLE');
    expect(after.policy?.constraints?.resources?.maxCpu).toBe('6');
    expect(after.policy?.displayName).toBe('from-editor');
    expect(after.spec.maintenancePolicy).toEqual(before.spec.maintenancePolicy);
    // Saving the editor unchanged is no update at all.
    const same = tmux('cwic sandbox runner edit wiz-1', { EDITOR: 'true' });
    expect(await same.exitCode()).toBe(0);
    expect(same.screen()).toContain('runner/wiz-1: no changes');
  });

  it('create --wait shows a progress line on a terminal until the runner connects', async () => {
    writeFileSync(join(p.workDir, 'c.yaml'), 'identity: {zone: us-east-1, cluster_name: cks-c}\n');
    const s = tmux('cwic sandbox runner create wait-tty -f c.yaml --wait --timeout 90');
    await s.waitForText(/[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] waiting for runner wait-tty to connect \(\d+s\)/);
    await connectRunner('wait-tty', 'cks-c');
    expect(await s.exitCode(60_000)).toBe(0);
    const screen = s.screen();
    expect(screen).toContain('runner/wait-tty created and connected');
    // The progress line was erased when the wait ended.
    expect(screen).not.toContain('waiting for runner wait-tty');
  });

  it('create --wait is silent when piped: stderr stays empty, stdout carries the data only', async () => {
    writeFileSync(join(p.workDir, 'd.yaml'), 'identity: {zone: us-east-1, cluster_name: cks-d}\n');
    const child = spawn('/bin/sh', ['-c', 'cwic sandbox runner create wait-pipe -f d.yaml --wait --timeout 90 -o name | cat'], { cwd: p.workDir, env: p.shellEnv });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number>((resolve) => child.on('close', (code) => resolve(code ?? -1)));
    await waitFor(async () => (await p.api('GET', '/v1/sandbox/managedRunners/wait-pipe')).status === 200, { timeoutMs: 30_000, what: 'wait-pipe created' });
    await connectRunner('wait-pipe', 'cks-d');
    expect(await exited).toBe(0);
    expect(stderr).toBe('');
    expect(stdout).toBe('runner/wait-pipe\n');
  });

  it('create --wait gives up after --timeout with exit 1 and says why', () => {
    const r = sh(p, `printf 'identity: {zone: us-east-1, cluster_name: cks-a}\\n' | cwic sandbox runner create wait-never -f - --wait --timeout 1`);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^Error: waiting for runner wait-never: deadline_exceeded: not connected after 1s/);
    expect(r.stdout).toBe('');
  });
});
