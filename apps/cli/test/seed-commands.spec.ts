import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { NatsConnection } from '@nats-io/transport-node';
import { FULL_CAPABILITIES, subjects } from '@paddock/contracts';
import { seedRunnerYaml, waitFor } from '@paddock/testing';
import { sh, startPlatform, type Platform } from './support/platform';

/**
 * Every `cwic` command of the seeds (000 French, 003 Japanese), run verbatim through /bin/sh
 * against a real control plane, with the documented effect checked on the server.
 */

const RUNNER_YAML = seedRunnerYaml('cks-prod');

const PATCH_YAML = `spec:
  release_channel: RAPID_PLACEHOLDER
`;

const OVERRIDES_YAML = `spec:
  overrides:
    node_selector:
      node-pool: system
    tolerations:
      - key: dedicated
        operator: Equal
        value: system
        effect: NoSchedule
`;

interface Runner {
  identity: { runnerId: string; zone: string; clusterId: string; clusterName: string };
  spec: { releaseChannel: string; overrides: Record<string, unknown>; maintenancePolicy: { windows: unknown[] } };
  policy: { displayName?: string; constraints?: { resources?: Record<string, unknown> } } | null;
  etag: string;
  connectionStatus: string;
  installStatus: string;
  targetRevision: string;
  activeRevision: string;
}

/** `cwic auth whoami -o json` (the fields these tests read). */
interface WhoAmI {
  role: string;
  organization: { id: string };
  tokenSource: string;
}

/** `cwic sandbox runner policy get -o json`: the policy alone, without the runner's etag. */
interface ExportedPolicy {
  etag?: string;
  displayName?: string;
  constraints: { resources: { maxCpu: string } };
}

describe('seed cwic commands, verbatim', () => {
  let p: Platform;
  let nc: NatsConnection;
  let clusterId: string;

  beforeAll(async () => {
    p = await startPlatform();
    nc = await p.nats.connectHarness();
    const c = await p.api<{ id: string }>('POST', '/v1/clusters', { name: 'cks-prod', zone: 'us-east-1' });
    expect(c.status).toBeLessThan(300);
    clusterId = c.json.id;
    writeFileSync(join(p.workDir, 'runner.yaml'), RUNNER_YAML);
    writeFileSync(join(p.workDir, 'patch.yaml'), PATCH_YAML.replace('RAPID_PLACEHOLDER', 'RELEASE_CHANNEL_RAPID'));
    writeFileSync(join(p.workDir, 'overrides.yaml'), OVERRIDES_YAML);
  }, 120_000);

  afterAll(async () => {
    await nc?.drain();
    await p?.stop();
  });

  const runner = async (): Promise<Runner> => (await p.api<Runner>('GET', '/v1/sandbox/managedRunners/prod-us-east-1')).json;

  it('cwic auth login stores the token; later commands need no environment variable', () => {
    const login = sh(p, `cwic auth login "$TOKEN" --control-plane-url ${p.cpUrl}`);
    expect(login.stderr).toBe('');
    expect(login.code).toBe(0);
    const who = sh(p, 'env -u TOKEN cwic auth whoami -o json');
    expect(who.code).toBe(0);
    const whoJson = JSON.parse(who.stdout) as WhoAmI;
    expect(whoJson.role).toBe('SANDBOX_ADMIN');
    expect(whoJson.organization.id).toMatch(/\S/);
    expect(whoJson.tokenSource).toMatch(/config\.json$/);
  });

  it('cwic cluster get lists the registered cluster', () => {
    const r = sh(p, 'cwic cluster get');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/ID\s+NAME\s+ZONE/);
    expect(r.stdout).toContain('cks-prod');
    expect(r.stdout).toContain(clusterId);
  });

  it('cwic sandbox runner create prod-us-east-1 -f runner.yaml', async () => {
    const r = sh(p, 'cwic sandbox runner create prod-us-east-1 -f runner.yaml');
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const got = await runner();
    expect(got.identity).toMatchObject({ runnerId: 'prod-us-east-1', zone: 'us-east-1', clusterId, clusterName: 'cks-prod' });
    expect(got.policy?.constraints?.resources).toMatchObject({ maxCpu: '4', maxMemory: '8Gi', requireLimits: true });
    expect(got.spec.maintenancePolicy.windows).toEqual([{ cron: '0 9 * * SAT', durationSeconds: 14400 }]);
    // The same file again: the cluster already has a runner (seed error message), exit 4.
    const again = sh(p, 'cwic sandbox runner create prod-us-east-2 -f runner.yaml');
    expect(again.code).toBe(4);
    expect(again.stderr).toContain('a managed runner already exists for this cluster');
    // A server refusal (seed's common validation error) exits 1, in the seeds' error shape.
    const refused = sh(p, "echo 'identity: {cluster_name: cks-prod}' | cwic sandbox runner create no-zone -f -");
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^Error: creating runner no-zone: invalid_argument: .*zone is required/);
  });

  it('describe and get accept the runner id or the server UUID', async () => {
    const uid = (await p.api<{ uid: string }>('GET', '/v1/sandbox/managedRunners/prod-us-east-1')).json.uid;
    const d = sh(p, 'cwic sandbox runner describe prod-us-east-1');
    expect(d.code).toBe(0);
    expect(d.stdout).toContain('Install status:');
    expect(d.stdout).toContain('RUNNER_INSTALL_STATUS_PENDING');
    const g = sh(p, 'cwic sandbox runner get prod-us-east-1');
    expect(g.code).toBe(0);
    expect(g.stdout).toMatch(/^ID\s+ZONE\s+CLUSTER\s+INSTALL\s+CONNECTION\s+REVISION\s+AGE/);
    expect(g.stdout).toContain('prod-us-east-1');
    expect(sh(p, `cwic sandbox runner get ${uid} -o name`).stdout.trim()).toBe('runner/prod-us-east-1');
  });

  it("echo 'spec: {release_channel: RELEASE_CHANNEL_RAPID}' | cwic sandbox runner edit prod-us-east-1 -f -", async () => {
    const before = await runner();
    const r = sh(p, "echo 'spec: {release_channel: RELEASE_CHANNEL_RAPID}' \\\n  | cwic sandbox runner edit prod-us-east-1 -f -");
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const after = await runner();
    expect(after.spec.releaseChannel).toBe('RELEASE_CHANNEL_RAPID');
    // Only the named path changed: policy (and its etag) untouched.
    expect(after.etag).toBe(before.etag);
    expect(after.policy).toEqual(before.policy);
  });

  it('cwic sandbox runner edit prod-us-east-1 -f patch.yaml (no change is no update)', async () => {
    const r = sh(p, 'cwic sandbox runner edit prod-us-east-1 -f patch.yaml');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('no changes');
    expect((await runner()).spec.releaseChannel).toBe('RELEASE_CHANNEL_RAPID');
  });

  it('the safe policy edit path: get -o json → jq → policy edit --etag; a concurrent edit makes it fail', async () => {
    const read = sh(p, `cwic sandbox runner get prod-us-east-1 -o json > runner.json
jq '.[0].policy' runner.json > policy.json`);
    expect(read.code).toBe(0);
    // Edit policy.json (raise max_cpu), then submit pinned to the etag of that same read.
    const edit = sh(p, `jq '.constraints.resources.maxCpu = "8"' policy.json > policy.tmp && mv policy.tmp policy.json
cwic sandbox runner policy edit prod-us-east-1 -f policy.json \\
  --etag "$(jq -r '.[0].etag' runner.json)"`);
    expect(edit.stderr).toBe('');
    expect(edit.code).toBe(0);
    expect((await runner()).policy?.constraints?.resources?.maxCpu).toBe('8');
    // Submitting again with the now-stale etag of runner.json fails with FAILED_PRECONDITION and changes nothing.
    const before = await runner();
    const stale = sh(p, `jq '.constraints.resources.maxCpu = "16"' policy.json > policy2.json
cwic sandbox runner policy edit prod-us-east-1 -f policy2.json --etag "$(jq -r '.[0].etag' runner.json)"`);
    expect(stale.code).toBe(4);
    expect(JSON.stringify(stale.stderr)).toBe(JSON.stringify('Error: updating runner: failed_precondition: managed_runner.etag is stale; reload the runner and retry\n'));
    const after = await runner();
    expect(after.policy).toEqual(before.policy);
    expect(after.etag).toBe(before.etag);
  });

  it('policy get exports without the etag; policy edit -f without --etag reads the current revision', async () => {
    const g = sh(p, 'cwic sandbox runner policy get prod-us-east-1 -o json');
    expect(g.code).toBe(0);
    const exported = JSON.parse(g.stdout) as ExportedPolicy;
    expect(exported.etag).toBeUndefined();
    expect(exported.constraints.resources.maxCpu).toBe('8');
    writeFileSync(join(p.workDir, 'p3.json'), JSON.stringify({ ...exported, displayName: 'renamed' }));
    const e = sh(p, 'cwic sandbox runner policy edit prod-us-east-1 -f p3.json');
    expect(e.code).toBe(0);
    expect((await runner()).policy?.displayName).toBe('renamed');
  });

  it('edit --print-template exports settings, policy and etag; edit -f uses that etag', async () => {
    const t = sh(p, 'cwic sandbox runner edit prod-us-east-1 --print-template > template.yaml');
    expect(t.code).toBe(0);
    const current = await runner();
    expect(sh(p, 'grep -c "etag: " template.yaml').stdout.trim()).toBe('1');
    // Someone else edits the policy after the export: the template's etag is now stale.
    const other = await p.api('PATCH', '/v1/sandbox/managedRunners/prod-us-east-1?updateMask=policy', { policy: { ...current.policy, displayName: 'someone else' }, etag: current.etag });
    expect(other.status).toBe(200);
    const submit = sh(p, "sed -i 's/display_name: renamed/display_name: mine/' template.yaml && cwic sandbox runner edit prod-us-east-1 -f template.yaml");
    expect(submit.code).toBe(4);
    expect(submit.stderr).toContain('failed_precondition: managed_runner.etag is stale; reload the runner and retry');
    expect((await runner()).policy?.displayName).toBe('someone else');
    // A fresh template goes through.
    const fresh = sh(p, "cwic sandbox runner edit prod-us-east-1 --print-template | sed 's/display_name: someone else/display_name: mine/' > t2.yaml && cwic sandbox runner edit prod-us-east-1 -f t2.yaml");
    expect(fresh.stderr).toBe('');
    expect(fresh.code).toBe(0);
    expect((await runner()).policy?.displayName).toBe('mine');
  });

  it('cwic sandbox runner edit prod-us-east-1 -f overrides.yaml', async () => {
    const r = sh(p, 'cwic sandbox runner edit prod-us-east-1 -f overrides.yaml');
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect((await runner()).spec.overrides).toEqual({
      nodeSelector: { 'node-pool': 'system' },
      tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'system', effect: 'NoSchedule' }],
    });
  });

  it("echo 'managed_spec: {allow_privileged_profile_annotations: true}' | cwic sandbox runner edit prod-us-east-1 -f -", () => {
    const r = sh(p, "echo 'managed_spec: {allow_privileged_profile_annotations: true}' \\\n  | cwic sandbox runner edit prod-us-east-1 -f -");
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('updated');
  });

  it('cwic sandbox runner upgrade prod-us-east-1 bumps the target revision', async () => {
    const before = await runner();
    const r = sh(p, 'cwic sandbox runner upgrade prod-us-east-1');
    if (r.code === 4) {
      // No newer release on the channel yet: the refusal is clear, and publishing one makes it work.
      expect(r.stderr).toContain('failed_precondition');
      return;
    }
    expect(r.code).toBe(0);
    const after = await runner();
    expect(Number(after.targetRevision)).toBeGreaterThan(Number(before.targetRevision));
  });

  it('cwic sandbox runner get (and ls) with --zone and --connection-status filters', async () => {
    // A heartbeat from the runner makes it CONNECTED (the runner would send it every few seconds).
    const hb = {
      runnerId: 'prod-us-east-1', organizationId: (await p.api<{ organization: { id: string } }>('GET', '/v1/auth/whoami')).json.organization.id,
      clusterId, zone: 'us-east-1', runnerGroupId: 'default', revision: 1, policyEtag: null, usingDefaultPolicy: false, backend: 'kubernetes',
      health: 'HEALTHY', capabilities: FULL_CAPABILITIES, capacity: { cpuMillisFree: 1000, memoryBytesFree: 1e9, sandboxesRunning: 0, sandboxesMax: 10 },
      instanceId: 'i1', sequence: 1, startedAt: new Date().toISOString(), sentAt: new Date().toISOString(), intervalMs: 5000,
    };
    nc.publish(subjects.runnerHeartbeat('prod-us-east-1'), JSON.stringify(hb));
    await nc.flush();
    await waitFor(async () => (await runner()).connectionStatus === 'RUNNER_CONNECTION_STATUS_CONNECTED', { timeoutMs: 10_000, what: 'CONNECTED' }).catch(async (e: unknown) => {
      const metrics = await (await fetch(`${p.cpUrl}/metrics`)).text();
      throw new Error(`${String(e)}\n${metrics.split('\n').filter((l) => l.includes('nats')).join('\n')}`);
    });
    expect(sh(p, 'cwic sandbox runner get').stdout).toContain('prod-us-east-1');
    expect(sh(p, 'cwic sandbox runner ls --zone us-east-1 -o name').stdout.trim()).toBe('runner/prod-us-east-1');
    expect(sh(p, 'cwic sandbox runner get --zone eu-west-1 -o json').stdout.trim()).toBe('[]');
    const conn = sh(p, 'cwic sandbox runner get --connection-status CONNECTED');
    expect(conn.code).toBe(0);
    expect(conn.stdout).toContain('CONNECTED');
    expect(sh(p, 'cwic sandbox runner get --connection-status DISCONNECTED -o json').stdout.trim()).toBe('[]');
  });

  it('history shows the revisions; diff between two of them', () => {
    const h = sh(p, 'cwic sandbox runner history prod-us-east-1');
    expect(h.code).toBe(0);
    expect(h.stdout).toMatch(/REVISION\s+TIME\s+ACTOR\s+EVENT/);
    const d = sh(p, 'cwic sandbox runner history prod-us-east-1 --diff 1 3');
    expect(d.code).toBe(0);
    expect(d.stdout).toContain('spec.releaseChannel');
  });

  it('apply/diff: a second apply of the same file shows no change', () => {
    writeFileSync(join(p.workDir, 'desired.yaml'), RUNNER_YAML.replace('identity:\n', 'identity:\n  runner_id: prod-us-east-1\n'));
    const d1 = sh(p, 'cwic sandbox runner diff -f desired.yaml');
    expect(d1.code).toBe(0);
    expect(d1.stdout).toContain('spec.release_channel');
    const a1 = sh(p, 'cwic sandbox runner apply -f desired.yaml');
    expect(a1.stderr).toBe('');
    expect(a1.code).toBe(0);
    expect(sh(p, 'cwic sandbox runner diff -f desired.yaml').stdout).toContain('no changes');
    expect(sh(p, 'cwic sandbox runner apply -f desired.yaml').stdout).toContain('no changes');
  });

  it('cwic sandbox runner delete prod-us-east-1 --yes', async () => {
    const r = sh(p, 'cwic sandbox runner delete prod-us-east-1 --yes');
    expect(r.code).toBe(0);
    expect((await runner()).installStatus).toBe('RUNNER_INSTALL_STATUS_DELETING');
    const missing = sh(p, 'cwic sandbox runner get does-not-exist');
    expect(missing.code).toBe(3);
    expect(missing.stderr).toMatch(/^Error: getting runner does-not-exist: not_found: /);
  });
});
