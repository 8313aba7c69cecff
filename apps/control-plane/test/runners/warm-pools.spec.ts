/**
 * `spec.warmPools` on the managed runner: stored and shown, edited with the `spec.warm_pools` mask
 * (the policy etag does not move), each template checked against the runner's policy with the
 * constraint named, and the runner's `warmPoolStatus` heartbeat shown on the resource.
 */
import { subjects, type ManagedRunner } from '@paddock/contracts';
import { waitFor } from '@paddock/testing';
import { api, startTestApp, type TestApp } from '../support/app';
import type { ErrorBody } from '../support/errors';
import { createRunner, heartbeat } from '../support/fixtures';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
});

const POLICY = { constraints: { resources: { maxCpu: '2', maxMemory: '4Gi' } } };
const small = { containers: [{ name: 'main', image: 'paddock/base', resources: { cpu: '100m', memory: '128Mi' } }] };
const huge = { containers: [{ name: 'main', image: 'paddock/base', resources: { cpu: '8', memory: '128Mi' } }] };
const patch = <T = ManagedRunner>(runnerId: string, mask: string, body: unknown) =>
  api<T>(t, 'PATCH', `/v1/sandbox/managedRunners/${runnerId}?updateMask=${mask}`, { token: t.adminToken, body });

describe('spec.warmPools', () => {
  it('is stored, shown, and replaced with updateMask=spec.warm_pools without moving the policy etag', async () => {
    const { body: created } = await createRunner(t, 'warm-a', { policy: POLICY, spec: { warmPools: [{ name: 'agents', size: 5, template: small }] } });
    expect(created.spec.warmPools).toEqual([{ name: 'agents', size: 5, template: small }]);
    expect(created.warmPoolStatus).toEqual([]);

    const resized = await patch('warm-a', 'spec.warm_pools', { spec: { warmPools: [{ name: 'agents', size: 2, template: small }, { name: 'big', size: 1, template: { containers: [{ name: 'main', resources: { cpu: '1', memory: '1Gi' } }] } }] } });
    expect(resized.status).toBe(200);
    expect(resized.body.spec.warmPools.map((p) => [p.name, p.size])).toEqual([['agents', 2], ['big', 1]]);
    expect(resized.body.etag).toBe(created.etag);
    expect(resized.body.spec.releaseChannel).toBe(created.spec.releaseChannel);
    const read = await api<ManagedRunner>(t, 'GET', '/v1/sandbox/managedRunners/warm-a', { token: t.adminToken });
    expect(read.body.spec.warmPools).toEqual(resized.body.spec.warmPools);

    // camelCase mask spelling too; an absent list under the mask removes every pool.
    const removed = await patch('warm-a', 'spec.warmPools', { spec: {} });
    expect(removed.body.spec.warmPools).toEqual([]);
  });

  it('refuses a template the policy would refuse, naming the template field and the constraint', async () => {
    const { body: created } = await createRunner(t, 'warm-b', { policy: POLICY });
    const r = await patch<ErrorBody>('warm-b', 'spec.warm_pools', { spec: { warmPools: [{ name: 'ok', size: 1, template: small }, { name: 'too-big', size: 1, template: huge }] } });
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('invalid_argument');
    const fields = r.body.details.flatMap((d) => d.fieldViolations ?? []).map((v) => v.field);
    expect(fields).toEqual(['runner.spec.warm_pools[1].template.containers[0].resources.cpu']);
    expect(r.body.message).toContain('runner.spec.warm_pools[1].template.containers[0].resources.cpu');
    const after = await api<ManagedRunner>(t, 'GET', '/v1/sandbox/managedRunners/warm-b', { token: t.adminToken });
    expect(after.body.spec.warmPools).toEqual([]);

    // A policy edit that would make an existing pool's template refused is refused the same way.
    expect((await patch('warm-b', 'spec.warm_pools', { spec: { warmPools: [{ name: 'mid', size: 1, template: { containers: [{ name: 'main', resources: { cpu: '1500m', memory: '128Mi' } }] } }] } })).status).toBe(200);
    const tighter = await patch<ErrorBody>('warm-b', 'policy', { policy: { constraints: { resources: { maxCpu: '1' } } }, etag: created.etag });
    expect(tighter.status).toBe(400);
    expect(tighter.body.details.flatMap((d) => d.fieldViolations ?? []).map((v) => v.field)).toEqual(['runner.spec.warm_pools[0].template.containers[0].resources.cpu']);

    // At create too, against the policy in the same body.
    const cluster = await t.registerCluster(t.adminToken, { name: 'cluster-warm-c', zone: 'us-east-1' });
    const c = await api<ErrorBody>(t, 'POST', '/v1/sandbox/managedRunners', {
      token: t.adminToken,
      body: { identity: { runnerId: 'warm-c', zone: 'us-east-1', clusterId: cluster.id }, spec: { warmPools: [{ name: 'x', size: 1, template: huge }] }, policy: POLICY },
    });
    expect(c.status).toBe(400);
    expect(c.body.details.flatMap((d) => d.fieldViolations ?? []).map((v) => v.field)).toEqual(['runner.spec.warm_pools[0].template.containers[0].resources.cpu']);
  });

  it('refuses malformed pools by name: a bad name, a negative size, a name used twice', async () => {
    await createRunner(t, 'warm-d', { policy: POLICY });
    const r = await patch<ErrorBody>('warm-d', 'spec.warm_pools', {
      spec: { warmPools: [{ name: 'Bad_Name', size: 1, template: small }, { name: 'a', size: -1, template: small }, { name: 'a', size: 1, template: small }] },
    });
    expect(r.status).toBe(400);
    const fields = r.body.details.flatMap((d) => d.fieldViolations ?? []).map((v) => v.field).sort();
    expect(fields).toEqual(['runner.spec.warm_pools[0].name', 'runner.spec.warm_pools[1].size', 'runner.spec.warm_pools[2].name']);
  });

  it("shows the runner's reported warmPoolStatus from its heartbeat", async () => {
    const { clusterId } = await createRunner(t, 'warm-e', { policy: POLICY, spec: { warmPools: [{ name: 'agents', size: 3, template: small }] } });
    const status = [{ name: 'agents', size: 3, ready: 2 }];
    t.nats.publish(subjects.runnerHeartbeat('warm-e'), JSON.stringify(heartbeat(t, 'warm-e', clusterId, { warmPoolStatus: status })));
    const shown = await waitFor(async () => {
      const r = await api<ManagedRunner>(t, 'GET', '/v1/sandbox/managedRunners/warm-e', { token: t.adminToken });
      return r.body.warmPoolStatus.length > 0 ? r.body : undefined;
    });
    expect(shown.warmPoolStatus).toEqual(status);
  });
});
