import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { waitFor } from '@paddock/testing';
import type { ControllerProcess } from '@paddock/e2e/platform';
import { parseOutputObject, startFixture, type ProviderFixture } from '../support/platform';
import { SEED_MAIN_TF, type Workspace } from '../support/terraform';

/**
 * The seed's Terraform flow against the real control plane and a controller with the local
 * driver (which starts a real runner process), through the real terraform binary: create,
 * refresh until ready, drift, the etag guard, resets, overrides, replacement, import, the
 * data source, and destroy waiting for the teardown. The tests run in order on one runner.
 */
const ZONE = 'us-east-04a';
const RUNNER = 'tf-runner';
const RENAMED = 'tf-runner-2';

/** The seed's main.tf with a text edit; every edit asserts it found what it changes. */
function edited(from: string, ...edits: [string | RegExp, string][]): string {
  let out = from;
  for (const [find, replace] of edits) {
    const next = out.replace(find, replace);
    if (next === out) throw new Error(`edit of main.tf did not apply: ${String(find)}`);
    out = next;
  }
  return out;
}

describe('coreweave_sandbox_managed_runner through terraform, against the control plane and a local controller', () => {
  let f: ProviderFixture;
  let controller: ControllerProcess;
  let clusterId = '';
  let ws: Workspace;
  const tfvars = (runnerId: string, cluster = clusterId, zone = 'US-EAST-04A'): string => `runner_id  = "${runnerId}"\ncluster_id = "${cluster}"\nzone       = "${zone}"\n`;
  /** Brings the runner back to the seed's configuration (between scenarios that edit it). */
  const applySeed = (runnerId = RUNNER): void => {
    ws.write('main.tf', SEED_MAIN_TF);
    ws.write('terraform.tfvars', tfvars(runnerId));
    ws.ok('terraform apply -auto-approve');
  };
  const runnerPid = (id: string): number => (JSON.parse(readFileSync(join(controller.stateDir, 'runners', id, 'process.json'), 'utf8')) as { pid: number }).pid;
  const alive = (pid: number): boolean => existsSync(`/proc/${pid}`);

  beforeAll(async () => {
    f = await startFixture();
    controller = await f.p.startController('tf-cks', ZONE);
    const clusters = await f.p.cpApi<{ clusters: { id: string; name: string }[] }>('GET', '/v1/clusters');
    clusterId = clusters.json.clusters.find((c) => c.name === 'tf-cks')?.id ?? '';
    expect(clusterId).toMatch(/^[0-9a-f-]{36}$/);
    ws = f.workspace('seed');
  }, 400_000);

  afterAll(async () => {
    // A runner left by a failed test is torn down with the platform (the controller's runner processes included).
    await f?.stop();
  });

  it('the seed flow verbatim: init, validate, plan, apply, refresh until READY, CONNECTED and active == target; then a plan is empty', async () => {
    ws.seed({ runnerId: RUNNER, clusterId, zone: 'US-EAST-04A' });
    expect(ws.read('main.tf')).toBe(SEED_MAIN_TF);
    expect(ws.ok('terraform init').text).toMatch(/Installing coreweave\/coreweave v0\.26\.0/);
    expect(ws.ok('terraform validate').text).toContain('Success! The configuration is valid.');
    const plan = ws.ok('terraform plan -out=runner.tfplan').text;
    expect(plan).toContain('# coreweave_sandbox_managed_runner.runner will be created');
    expect(plan).toMatch(/\+ zone\s+= "us-east-04a"/);
    expect(plan).toMatch(/\+ deployment_spec\s+= \(sensitive value\)/);
    expect(plan).toContain('Plan: 1 to add, 0 to change, 0 to destroy.');
    expect(ws.ok('terraform apply runner.tfplan').text).toContain('Apply complete! Resources: 1 added, 0 changed, 0 destroyed.');

    const created = (await f.runner(RUNNER)).json;
    expect(created.identity).toMatchObject({ runnerId: RUNNER, clusterId, zone: ZONE, runnerGroupId: 'default' });
    expect(created.spec).toEqual({
      releaseChannel: 'RELEASE_CHANNEL_STABLE',
      maintenancePolicy: { windows: [{ cron: '0 2 * * SAT', durationSeconds: 3600 }], exclusions: [] },
      overrides: { resources: { cpuRequest: '1', memoryRequest: '2Gi', cpuLimit: '4', memoryLimit: '8Gi' } },
      enforceResourceLimits: false,
      // The seed's configuration declares no warm pools: the runner has none.
      warmPools: [],
    });
    expect(created.policy).toEqual({
      displayName: 'Sandbox constraints',
      constraints: {
        resources: { defaultCpu: '1', defaultMemory: '2Gi', maxCpu: '8', maxMemory: '32Gi', maxGpuCount: 0 },
        lifecycle: { defaultLifetimeSeconds: 3600 },
      },
    });

    let status: Record<string, string> = {};
    await waitFor(
      () => {
        ws.ok('terraform plan -refresh-only -out=runner-status.tfplan');
        ws.ok('terraform apply runner-status.tfplan');
        status = parseOutputObject(ws.ok('terraform output runner_status').stdout);
        return status.install_status === 'RUNNER_INSTALL_STATUS_READY' && status.connection_status === 'RUNNER_CONNECTION_STATUS_CONNECTED' && status.active_revision === status.target_revision;
      },
      { timeoutMs: 180_000, intervalMs: 500, what: 'runner_status READY, CONNECTED, active_revision == target_revision' },
    );
    expect(status).toMatchObject({ runner_id: RUNNER, rollout_in_progress: 'false' });

    const again = ws.sh('terraform plan -detailed-exitcode');
    expect(again.text).toContain('No changes. Your infrastructure matches the configuration.');
    expect(again.code).toBe(0);
  });

  it('drift: a policy edit through cwic shows in the next plan, and apply restores the file\'s policy', async () => {
    const edit = f.cwic(
      `cwic sandbox runner get ${RUNNER} -o json > runner.json && jq '.[0].policy | .constraints.resources.maxCpu = "16"' runner.json > policy.json && cwic sandbox runner policy edit ${RUNNER} -f policy.json --etag "$(jq -r '.[0].etag' runner.json)"`,
    );
    expect(edit.code, edit.stderr).toBe(0);
    expect((await f.runner(RUNNER)).json.policy?.constraints?.resources?.maxCpu).toBe('16');

    const plan = ws.sh('terraform plan -detailed-exitcode -out=drift.tfplan');
    expect(plan.code, plan.text).toBe(2);
    // The refreshed state holds cwic's value; the plan takes it back to the file's.
    expect(plan.text).toMatch(/~ max_cpu\s+= "16" -> "8"/);
    expect(plan.text).toContain('Plan: 0 to add, 1 to change, 0 to destroy.');
    ws.ok('terraform apply drift.tfplan');
    expect((await f.runner(RUNNER)).json.policy?.constraints?.resources?.maxCpu).toBe('8');
    expect(ws.sh('terraform plan -detailed-exitcode').code).toBe(0);
  });

  it('a policy edit made between plan and apply fails the apply on the etag, changing nothing; a new plan then applies', async () => {
    ws.write('main.tf', edited(SEED_MAIN_TF, ['default_lifetime_seconds = 3600', 'default_lifetime_seconds = 7200'], ['cron = "0 2 * * SAT"', 'cron = "0 3 * * SUN"']));
    ws.ok('terraform plan -out=edit.tfplan');
    const before = (await f.runner(RUNNER)).json;

    const concurrent = f.cwic(
      `cwic sandbox runner get ${RUNNER} -o json > runner.json && jq '.[0].policy | .constraints.resources.maxMemory = "64Gi"' runner.json > policy.json && cwic sandbox runner policy edit ${RUNNER} -f policy.json --etag "$(jq -r '.[0].etag' runner.json)"`,
    );
    expect(concurrent.code, concurrent.stderr).toBe(0);
    const afterEdit = (await f.runner(RUNNER)).json;
    expect(afterEdit.etag).not.toBe(before.etag);

    const apply = ws.sh('terraform apply edit.tfplan');
    expect(apply.code).toBe(1);
    expect(apply.flat).toContain('Error: The runner policy changed since Terraform read it');
    expect(apply.flat).toContain('the API refused the update and nothing was changed');
    expect(apply.flat).toContain('Refresh the state and review a new plan before retrying');
    expect(apply.flat).toContain('with coreweave_sandbox_managed_runner.runner');

    // Nothing of the plan was applied: neither the policy nor the spec change, and cwic's edit stands.
    const now = (await f.runner(RUNNER)).json;
    expect(now.etag).toBe(afterEdit.etag);
    expect(now.policy).toEqual(afterEdit.policy);
    expect(now.policy?.constraints?.resources?.maxMemory).toBe('64Gi');
    expect(now.policy?.constraints?.lifecycle?.defaultLifetimeSeconds).toBe(3600);
    expect(now.spec).toEqual(afterEdit.spec);
    expect(now.spec.maintenancePolicy.windows).toEqual([{ cron: '0 2 * * SAT', durationSeconds: 3600 }]);

    ws.ok('terraform plan -out=edit.tfplan');
    ws.ok('terraform apply edit.tfplan');
    const applied = (await f.runner(RUNNER)).json;
    expect(applied.policy?.constraints?.lifecycle?.defaultLifetimeSeconds).toBe(7200);
    expect(applied.policy?.constraints?.resources?.maxMemory).toBe('32Gi');
    expect(applied.spec.maintenancePolicy.windows).toEqual([{ cron: '0 3 * * SUN', durationSeconds: 3600 }]);
  });

  it('removing maintenance_policy resets it through an update mask naming only that setting', async () => {
    applySeed();
    const before = (await f.runner(RUNNER)).json;
    ws.write('main.tf', edited(SEED_MAIN_TF, [/ {4}maintenance_policy = \{\n.*\n {4}\}\n/, '']));
    const plan = ws.ok('terraform plan -out=reset.tfplan').text;
    expect(plan).toMatch(/- maintenance_policy = \{/);
    expect(plan).toContain('Plan: 0 to add, 1 to change, 0 to destroy.');
    ws.ok('terraform apply reset.tfplan');

    const after = (await f.runner(RUNNER)).json;
    expect(after.spec.maintenancePolicy).toEqual({ windows: [], exclusions: [] });
    expect(after.spec.overrides).toEqual(before.spec.overrides);
    expect(after.policy).toEqual(before.policy);
    expect(after.etag).toBe(before.etag);
    // The revision the apply wrote changed the maintenance policy and nothing else.
    const revisions = (await f.p.cpApi<{ revisions: { revision: number; changes: { field: string }[] }[] }>('GET', `/v1/sandbox/managedRunners/${RUNNER}/revisions`)).json.revisions;
    const last = revisions.reduce((a, b) => (b.revision > a.revision ? b : a));
    expect(last.changes.length).toBeGreaterThan(0);
    for (const change of last.changes) expect(change.field).toMatch(/^spec\.maintenancePolicy(\.|$)/);
    expect(ws.sh('terraform plan -detailed-exitcode').code).toBe(0);
  });

  it('editing overrides replaces the whole object, and the env override is marked sensitive in the plan', async () => {
    ws.write('main.tf', edited(SEED_MAIN_TF, [/ {6}resources = \{\n(.*\n){4} {6}\}\n/, '      labels = { team = "ml" }\n      env    = { ENABLE_LIVE_NETWORK_UPDATE = "true" }\n']));
    const plan = ws.ok('terraform plan -out=overrides.tfplan').text;
    expect(plan).toMatch(/- resources = \{/);
    expect(plan).toMatch(/\+ labels\s+= \{/);
    expect(plan).toMatch(/\+ env\s+= \(sensitive value\)/);
    expect(plan).not.toContain('ENABLE_LIVE_NETWORK_UPDATE');
    ws.ok('terraform apply overrides.tfplan');
    expect((await f.runner(RUNNER)).json.spec.overrides).toEqual({ labels: { team: 'ml' }, env: { ENABLE_LIVE_NETWORK_UPDATE: 'true' } });
    expect(ws.sh('terraform plan -detailed-exitcode').code).toBe(0);
  });

  it('changing runner_id, cluster_id or zone plans a replacement; applying the new runner_id replaces the runner', async () => {
    applySeed();
    const other = await f.p.cpApi<{ id: string }>('POST', '/v1/clusters', { name: 'tf-other', zone: ZONE });
    expect(other.status).toBeLessThan(300);
    const cases: [string, string, string][] = [
      ['runner_id', tfvars(RENAMED), RENAMED],
      ['cluster_id', tfvars(RUNNER, other.json.id), other.json.id],
      ['zone', tfvars(RUNNER, clusterId, 'US-EAST-04B'), 'us-east-04b'],
    ];
    for (const [attribute, vars, value] of cases) {
      ws.write('terraform.tfvars', vars);
      const plan = ws.ok('terraform plan -out=replace.tfplan');
      expect(plan.text).toContain('# coreweave_sandbox_managed_runner.runner must be replaced');
      expect(plan.text).toMatch(new RegExp(`~ ${attribute}\\s+= "[^"]+" -> "${value}" # forces replacement`));
      const change = ws.planJson('replace.tfplan').resource_changes?.find((c) => c.address === 'coreweave_sandbox_managed_runner.runner')?.change;
      expect(change?.actions).toEqual(['delete', 'create']);
      expect(change?.replace_paths).toEqual([[attribute]]);
    }

    const oldPid = runnerPid(RUNNER);
    ws.write('terraform.tfvars', tfvars(RENAMED));
    ws.ok('terraform plan -out=replace.tfplan');
    expect(ws.ok('terraform apply replace.tfplan').text).toContain('Apply complete! Resources: 1 added, 0 changed, 1 destroyed.');
    expect((await f.runner(RUNNER)).status).toBe(404);
    expect(alive(oldPid)).toBe(false);
    expect((await f.runner(RENAMED)).json.identity.clusterId).toBe(clusterId);
    expect(await f.runnerIds()).toEqual([RENAMED]);
  });

  it('import by runner id into an empty state, then a plan of the matching configuration changes nothing; the data source reads the runner', async () => {
    const imported = f.workspace('import');
    imported.seed({ runnerId: RENAMED, clusterId, zone: 'US-EAST-04A' });
    imported.ok('terraform init');
    expect(imported.ok(`terraform import coreweave_sandbox_managed_runner.runner '${RENAMED}'`).text).toContain('Import successful!');
    imported.ok('terraform plan -out=import.tfplan');
    const plan = imported.planJson('import.tfplan');
    expect(plan.resource_changes?.map((c) => [c.address, c.change.actions])).toEqual([['coreweave_sandbox_managed_runner.runner', ['no-op']]]);

    const missing = imported.sh('terraform import coreweave_sandbox_managed_runner.other some-cluster-uuid');
    expect(missing.code).toBe(1);

    await waitFor(async () => (await f.runner(RENAMED)).json.installStatus === 'RUNNER_INSTALL_STATUS_READY', { timeoutMs: 120_000, what: 'replacement runner READY' });
    const reader = f.workspace('data-source');
    reader.write(
      'main.tf',
      `terraform {\n  required_providers {\n    coreweave = { source = "coreweave/coreweave", version = "~> 0.26" }\n  }\n}\n\nprovider "coreweave" {}\n\ndata "coreweave_sandbox_managed_runner" "r" {\n  runner_id = "${RENAMED}"\n}\n\noutput "status" {\n  value = {\n    zone           = data.coreweave_sandbox_managed_runner.r.zone\n    install_status = data.coreweave_sandbox_managed_runner.r.install_status\n    max_cpu        = data.coreweave_sandbox_managed_runner.r.policy.constraints.resources.max_cpu\n    channel        = data.coreweave_sandbox_managed_runner.r.spec.release_channel\n  }\n}\n`,
    );
    reader.ok('terraform init');
    reader.ok('terraform apply -auto-approve');
    expect(JSON.parse(reader.ok('terraform output -json status').stdout)).toEqual({
      zone: ZONE,
      install_status: 'RUNNER_INSTALL_STATUS_READY',
      max_cpu: '8',
      channel: 'RELEASE_CHANNEL_STABLE',
    });
  });

  it('destroy (the resource removed from the configuration) waits for the teardown, reporting progress; the API then answers not found', async () => {
    const pid = runnerPid(RENAMED);
    const withoutRunner = SEED_MAIN_TF.slice(0, SEED_MAIN_TF.indexOf('resource "coreweave_sandbox_managed_runner"'));
    ws.write('main.tf', withoutRunner);
    const plan = ws.ok('terraform plan -out=destroy.tfplan').text;
    expect(plan).toContain('# coreweave_sandbox_managed_runner.runner will be destroyed');
    const logFile = join(ws.dir, 'terraform.log');
    const apply = ws.ok('terraform apply destroy.tfplan', { TF_LOG: 'INFO', TF_LOG_PATH: logFile });
    expect(apply.text).toContain('coreweave_sandbox_managed_runner.runner: Destruction complete');
    expect(apply.text).toContain('Apply complete! Resources: 0 added, 0 changed, 1 destroyed.');
    // No waiting here: the apply returned only once the runner was gone.
    expect((await f.runner(RENAMED)).status).toBe(404);
    expect(await f.runnerIds()).toEqual([]);
    expect(alive(pid)).toBe(false);
    expect(existsSync(join(controller.stateDir, 'runners', RENAMED))).toBe(false);
    const log = readFileSync(logFile, 'utf8');
    expect(log).toContain(`Waiting for the controller to tear down runner ${RENAMED}`);
    expect(log).toContain(`Runner ${RENAMED} is gone after`);
    expect(log).not.toContain(f.p.token);
  });
});
