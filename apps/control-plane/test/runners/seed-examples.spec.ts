/**
 * Every `curl` example of the product's runner deployment guide (French and Japanese editions), run through
 * the real curl binary against the real control plane (Fastify, Postgres, NATS), each followed by
 * assertions on its documented effect.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { seedRunnerYaml } from '@paddock/testing';
import {
  ListManagedRunnersResponseSchema,
  ListRunnerRevisionsResponseSchema,
  ManagedRunnerSchema,
  type ListManagedRunnersResponse,
  type ManagedRunner,
  type ProfileBinding,
  type ProfileTemplate,
} from '@paddock/contracts';
import { api, startTestApp, type TestApp } from '../support/app';
import type { ErrorBody } from '../support/errors';
import { installReport } from '../support/fixtures';
import { publishRelease, report, runSeedCurl } from './support';

const SEED_CREATE = String.raw`curl -X POST https://api.coreweave.com/v1/sandbox/managedRunners \
  -H "Authorization: Bearer $TOKEN" \
  -H "Content-Type: application/json" \
  -d '{
    "displayName": "Production runner (US East)",
    "identity": {
      "runnerId": "prod-us-east-1",
      "zone": "us-east-1",
      "clusterId": "[CLUSTER-ID]"
    },
    "spec": {
      "releaseChannel": "RELEASE_CHANNEL_STABLE",
      "maintenancePolicy": {
        "windows": [
          { "cron": "0 9 * * SAT", "durationSeconds": 14400 }
        ]
      }
    },
    "policy": {
      "displayName": "default",
      "constraints": {
        "resources": {
          "defaultCpu": "1",
          "defaultMemory": "2Gi",
          "maxCpu": "4",
          "maxMemory": "8Gi",
          "requireLimits": true
        },
        "lifecycle": { "defaultLifetimeSeconds": 3600 }
      }
    }
  }'`;

const SEED_GET = String.raw`curl -H "Authorization: Bearer $TOKEN" \
  https://api.coreweave.com/v1/sandbox/managedRunners/prod-us-east-1`;

const SEED_RAPID = String.raw`curl -X PATCH "https://api.coreweave.com/v1/sandbox/managedRunners/prod-us-east-1?updateMask=spec.releaseChannel" \
  -H "Authorization: Bearer $TOKEN" \
  -H "Content-Type: application/json" \
  -d '{
    "identity": { "runnerId": "prod-us-east-1" },
    "spec": { "releaseChannel": "RELEASE_CHANNEL_RAPID" }
  }'`;

const SEED_READ_POLICY_AND_ETAG = String.raw`curl -H "Authorization: Bearer $TOKEN" \
  https://api.coreweave.com/v1/sandbox/managedRunners/prod-us-east-1 \
  | jq '{policy, etag}' > policy-and-etag.json`;

const SEED_REPLACE_POLICY = String.raw`curl -X PATCH "https://api.coreweave.com/v1/sandbox/managedRunners/prod-us-east-1?updateMask=policy" \
  -H "Authorization: Bearer $TOKEN" \
  -H "Content-Type: application/json" \
  -d @policy-and-etag.json`;

const SEED_OVERRIDES = String.raw`curl -X PATCH "https://api.coreweave.com/v1/sandbox/managedRunners/prod-us-east-1?updateMask=spec.overrides" \
  -H "Authorization: Bearer $TOKEN" \
  -H "Content-Type: application/json" \
  -d '{
    "identity": { "runnerId": "prod-us-east-1" },
    "spec": {
      "overrides": {
        "nodeSelector": { "node-pool": "system" },
        "tolerations":  [ { "key": "dedicated", "operator": "Equal", "value": "system", "effect": "NoSchedule" } ]
      }
    }
  }'`;

const SEED_LEGACY_PRIVILEGED = String.raw`curl -X PATCH https://api.coreweave.com/v1beta2/sandbox/managed-runners/prod-us-east-1 \
  -H "Authorization: Bearer $TOKEN" \
  -H "Content-Type: application/json" \
  -d '{
    "runner": {
      "id": "prod-us-east-1",
      "managedSpec": { "allowPrivilegedProfileAnnotations": true }
    },
    "updateMask": "managedSpec.allowPrivilegedProfileAnnotations"
  }'`;

const SEED_APPLY_UPDATE = String.raw`curl -X POST https://api.coreweave.com/v1/sandbox/managedRunners/prod-us-east-1:applyAvailableUpdate \
  -H "Authorization: Bearer $TOKEN"`;

const SEED_LIST = String.raw`curl -H "Authorization: Bearer $TOKEN" \
  'https://api.coreweave.com/v1/sandbox/managedRunners?pageSize=50&zone=us-east-1'`;

const SEED_DELETE = String.raw`curl -X DELETE https://api.coreweave.com/v1/sandbox/managedRunners/prod-us-east-1 \
  -H "Authorization: Bearer $TOKEN"`;

const SEED_RUNNER_YAML = seedRunnerYaml();

/** The parts of the legacy v1beta2 runner view (`managedSpec`, `profileBindings`) these tests read. */
interface LegacyRunner {
  managedSpec: { allowPrivilegedProfileAnnotations: boolean };
  profileBindings: ProfileBinding[];
}

let t: TestApp;
let dir: string;
let clusterId: string;
let stableRevision: number;

/** Runs a seed command; `T` is the body the test expects back (the runner unless told). */
const curl = <T = ManagedRunner>(cmd: string) => runSeedCurl<T>(cmd, { baseUrl: t.baseUrl, token: t.adminToken, cwd: dir, replace: { '[CLUSTER-ID]': clusterId } });

beforeAll(async () => {
  t = await startTestApp();
  dir = mkdtempSync(join(tmpdir(), 'paddock-seed-'));
  clusterId = (await t.registerCluster(t.adminToken, { name: 'prod-cluster', zone: 'us-east-1' })).id;
  stableRevision = await publishRelease(t, 'RELEASE_CHANNEL_STABLE', '1.0.0');
});
afterAll(async () => {
  await t?.close();
});

describe('seed: deploy a runner (POST /v1/sandbox/managedRunners)', () => {
  it('creates the runner from the seed body, pending install, targeting the newest stable release', async () => {
    const r = await curl(SEED_CREATE);
    expect(r.status).toBe(200);
    expect(r.body.identity).toEqual({ runnerId: 'prod-us-east-1', zone: 'us-east-1', clusterId, clusterName: 'prod-cluster', runnerGroupId: 'default' });
    expect(r.body.displayName).toBe('Production runner (US East)');
    expect(r.body.spec.maintenancePolicy.windows).toEqual([{ cron: '0 9 * * SAT', durationSeconds: 14400 }]);
    expect(r.body.policy).toMatchObject({ constraints: { resources: { maxCpu: '4' }, lifecycle: { defaultLifetimeSeconds: 3600 } } });
    expect(r.body.installStatus).toBe('RUNNER_INSTALL_STATUS_PENDING');
    expect(r.body.connectionStatus).toBe('RUNNER_CONNECTION_STATUS_DISCONNECTED');
    expect(r.body.targetRevision).toBe(String(stableRevision));
    expect(r.body.rolloutInProgress).toBe(true);
    expect(r.body.usingDefaultPolicy).toBe(false);
    expect(r.body.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(typeof r.body.etag).toBe('string');
    expect(r.body.deploymentSpec.image).toBe('registry.example.com/paddock/runner:1.0.0');
    // The contracts schema other apps (CLI, controller) parse with describes the wire exactly.
    expect(ManagedRunnerSchema.strict().parse(r.body)).toEqual(r.body);
  });

  it('refuses a second runner on the same cluster with the documented message', async () => {
    const r = await curl<ErrorBody>(SEED_CREATE.replace('"runnerId": "prod-us-east-1"', '"runnerId": "prod-us-east-2"'));
    expect(r.status).toBe(409);
    expect(r.body).toMatchObject({ code: 'already_exists', message: 'a managed runner already exists for this cluster' });
  });

  it('refuses a taken runner id with already_exists', async () => {
    const other = await t.registerCluster(t.adminToken, { name: 'other-cluster', zone: 'us-east-1' });
    const r = await api<ErrorBody>(t, 'POST', '/v1/sandbox/managedRunners', {
      token: t.adminToken,
      body: { identity: { runnerId: 'prod-us-east-1', zone: 'us-east-1', clusterId: other.id }, policy: {} },
    });
    expect(r.status).toBe(409);
    expect(r.body.code).toBe('already_exists');
    expect(r.body.details[1]?.fieldViolations?.[0]?.field).toBe('runner.identity.runner_id');
  });

  it.each([
    ['zone missing', { identity: { runnerId: 'r-zone', clusterId: 'x' } }, 'runner.identity.zone is required'],
    ['cluster missing', { identity: { runnerId: 'r-cluster', zone: 'us-east-1' } }, 'runner.identity.cluster_id or cluster_name is required'],
  ])('documents the validation error when %s', async (_name, body, message) => {
    const r = await api<ErrorBody>(t, 'POST', '/v1/sandbox/managedRunners', { token: t.adminToken, body });
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ code: 'invalid_argument', message });
  });

  it('refuses a policy over 256 KiB encoded with the documented message', async () => {
    const c = await t.registerCluster(t.adminToken, { name: 'big-policy', zone: 'us-east-1' });
    const big = { constraints: { image: { allowedRegistries: Array.from({ length: 12000 }, (_v, i) => `registry-${i}.example.com`) } } };
    expect(Buffer.byteLength(JSON.stringify(big))).toBeGreaterThan(256 * 1024);
    const r = await api<ErrorBody>(t, 'POST', '/v1/sandbox/managedRunners', {
      token: t.adminToken,
      body: { identity: { runnerId: 'big', zone: 'us-east-1', clusterId: c.id }, policy: big },
    });
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ code: 'invalid_argument', message: 'policy exceeds 256 KiB limit' });
  });

  it('accepts the snake_case runner.yaml (cwic create RUNNER-ID -f runner.yaml) with cluster_name', async () => {
    const c = await t.registerCluster(t.adminToken, { name: 'yaml-cluster', zone: 'us-east-1' });
    const doc: unknown = parseYaml(SEED_RUNNER_YAML.replace('[CLUSTER-NAME]', 'yaml-cluster'));
    const r = await api<ManagedRunner>(t, 'POST', '/v1/sandbox/managedRunners?runnerId=yaml-runner', { token: t.adminToken, body: doc });
    expect(r.status).toBe(200);
    expect(r.body.identity).toMatchObject({ runnerId: 'yaml-runner', clusterId: c.id, clusterName: 'yaml-cluster' });
    expect(r.body.spec.maintenancePolicy.windows[0]?.durationSeconds).toBe(14400);
    expect(r.body.policy?.displayName).toBe('default');
    expect(r.body.policy?.constraints?.resources?.requireLimits).toBe(true);
  });
});

describe('seed: check status, update, upgrade, list, delete', () => {
  it('reads the runner by its runner id and by its uid', async () => {
    const byId = await curl(SEED_GET);
    expect(byId.status).toBe(200);
    const byUid = await api<ManagedRunner>(t, 'GET', `/v1/sandbox/managedRunners/${byId.body.uid}`, { token: t.adminToken });
    expect(byUid.body).toEqual(byId.body);
  });

  it('switches to the RAPID channel without moving the policy etag', async () => {
    const before = await curl(SEED_GET);
    const r = await curl(SEED_RAPID);
    expect(r.status).toBe(200);
    expect(r.body.spec.releaseChannel).toBe('RELEASE_CHANNEL_RAPID');
    expect(r.body.spec.maintenancePolicy).toEqual(before.body.spec.maintenancePolicy);
    expect(r.body.etag).toBe(before.body.etag);
  });

  it('replaces the policy with {policy, etag} from a read, and refuses the same etag afterwards', async () => {
    await curl<undefined>(SEED_READ_POLICY_AND_ETAG);
    const file = join(dir, 'policy-and-etag.json');
    const doc = JSON.parse(readFileSync(file, 'utf8')) as { policy: { constraints: { lifecycle: { defaultLifetimeSeconds: number } } }; etag: string };
    doc.policy.constraints.lifecycle.defaultLifetimeSeconds = 7200;
    writeFileSync(file, JSON.stringify(doc));
    const r = await curl(SEED_REPLACE_POLICY);
    expect(r.status, r.text).toBe(200);
    expect(r.body.policy?.constraints?.lifecycle?.defaultLifetimeSeconds).toBe(7200);
    expect(r.body.etag).not.toBe(doc.etag);

    const stale = await curl<ErrorBody>(SEED_REPLACE_POLICY);
    expect(stale.status).toBe(400);
    expect(stale.body).toMatchObject({ code: 'failed_precondition', message: 'managed_runner.etag is stale; reload the runner and retry' });
    const after = await curl(SEED_GET);
    expect(after.body.etag).toBe(r.body.etag);
  });

  it('pins the runner pod with spec.overrides, rendered into the deployment spec', async () => {
    const r = await curl(SEED_OVERRIDES);
    expect(r.status).toBe(200);
    expect(r.body.spec.overrides).toEqual({
      nodeSelector: { 'node-pool': 'system' },
      tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'system', effect: 'NoSchedule' }],
    });
    expect(r.body.spec.releaseChannel).toBe('RELEASE_CHANNEL_RAPID');
    expect(r.body.deploymentSpec.nodeSelector).toEqual({ 'node-pool': 'system' });
    expect(r.body.deploymentSpec.tolerations).toHaveLength(1);
  });

  it('refuses a privileged legacy template until the v1beta2 flag is set, then accepts it', async () => {
    const tpl = await api<ProfileTemplate>(t, 'POST', '/v1beta2/sandbox/profile-templates', {
      token: t.adminToken,
      body: {
        profileTemplate: {
          displayName: 'hardened',
          spec: { podTemplateJson: JSON.stringify({ securityContext: { appArmorProfile: { type: 'RuntimeDefault' }, seccompProfile: { type: 'RuntimeDefault' } } }) },
        },
      },
    });
    expect(tpl.status).toBe(200);
    const id = tpl.body.profileTemplateId;
    const bind = { runner: { id: 'prod-us-east-1', profileBindings: [{ profileTemplateId: id, profileName: 'default', isDefault: true }] }, updateMask: 'profileBindings' };
    const refused = await api<ErrorBody>(t, 'PATCH', '/v1beta2/sandbox/managed-runners/prod-us-east-1', { token: t.adminToken, body: bind });
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe('permission_denied');
    expect(refused.body.message).toBe(
      `profile_bindings[0]: template "${id}" contains privileged pod-spec fields [securityContext.appArmorProfile securityContext.seccompProfile]; runner does not have allow_privileged_profile_annotations=true`,
    );

    const flag = await curl<LegacyRunner>(SEED_LEGACY_PRIVILEGED);
    expect(flag.status).toBe(200);
    expect(flag.body.managedSpec.allowPrivilegedProfileAnnotations).toBe(true);

    const accepted = await api<LegacyRunner>(t, 'PATCH', '/v1beta2/sandbox/managed-runners/prod-us-east-1', { token: t.adminToken, body: bind });
    expect(accepted.status).toBe(200);
    expect(accepted.body.profileBindings).toEqual(bind.runner.profileBindings);
  });

  it('applies an available update: targetRevision rises, rollout runs until the controller reports it', async () => {
    const none = await curl<ErrorBody>(SEED_APPLY_UPDATE);
    expect(none.status).toBe(400);
    expect(none.body.code).toBe('failed_precondition');
    expect(none.body.message).toMatch(/^no update available for managed runner prod-us-east-1/);

    const rapid = await publishRelease(t, 'RELEASE_CHANNEL_RAPID', '1.1.0');
    const before = await curl(SEED_GET);
    expect(before.body.updateAvailable).toBe(true);
    const r = await curl(SEED_APPLY_UPDATE);
    expect(r.status).toBe(200);
    expect(r.body.targetRevision).toBe(String(rapid));
    expect(r.body.updateAvailable).toBe(false);
    expect(r.body.rolloutInProgress).toBe(true);
    expect(r.body.deploymentSpec.image).toBe('registry.example.com/paddock/runner:1.1.0');

    await report(t, installReport(t, 'prod-us-east-1', clusterId, { activeRevision: rapid }));
    const done = await curl(SEED_GET);
    expect(done.body).toMatchObject({ installStatus: 'RUNNER_INSTALL_STATUS_READY', activeRevision: String(rapid), rolloutInProgress: false });
  });

  it('lists runners of the zone', async () => {
    const r = await curl<ListManagedRunnersResponse>(SEED_LIST);
    expect(r.status).toBe(200);
    const ids = r.body.managedRunners.map((m) => m.identity.runnerId);
    expect(ids).toEqual(expect.arrayContaining(['prod-us-east-1', 'yaml-runner']));
    expect(r.body.nextPageToken).toBe('');
    ListManagedRunnersResponseSchema.parse(r.body);
    const revisions = await api(t, 'GET', '/v1/sandbox/managedRunners/prod-us-east-1/revisions', { token: t.adminToken });
    expect(ListRunnerRevisionsResponseSchema.parse(revisions.body).revisions.length).toBeGreaterThan(5);
    const connected = await api<ListManagedRunnersResponse>(t, 'GET', '/v1/sandbox/managedRunners?connectionStatus=CONNECTED', { token: t.adminToken });
    expect(connected.body.managedRunners).toEqual([]);
    const other = await api<ListManagedRunnersResponse>(t, 'GET', '/v1/sandbox/managedRunners?zone=eu-west-1', { token: t.adminToken });
    expect(other.body.managedRunners).toEqual([]);
  });

  it('decommissions the runner: DELETING until the controller reports it gone, then not found and the cluster is free', async () => {
    const r = await curl(SEED_DELETE);
    expect(r.status).toBe(200);
    expect(r.body.installStatus).toBe('RUNNER_INSTALL_STATUS_DELETING');
    expect((await curl(SEED_GET)).body.installStatus).toBe('RUNNER_INSTALL_STATUS_DELETING');

    await report(t, installReport(t, 'prod-us-east-1', clusterId, { gone: true, fencingToken: 2 }));
    const gone = await curl<ErrorBody>(SEED_GET);
    expect(gone.status).toBe(404);
    expect(gone.body.code).toBe('not_found');

    const again = await curl(SEED_CREATE);
    expect(again.status).toBe(200);
    expect(again.body.installStatus).toBe('RUNNER_INSTALL_STATUS_PENDING');
  });
});
