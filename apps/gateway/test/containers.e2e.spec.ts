import { PaddockClient, Sandbox } from '@paddock/sdk';
import { IMAGE, useCluster } from './support/cluster';
import { http } from './support/infra';

interface StatusBody {
  sandboxId: string;
  status: { state: string; stateReason?: string; message?: string; containerStatuses?: { name: string; state: string; exitCode?: number }[] };
}

async function logsOf(sb: Sandbox, container?: string): Promise<string> {
  const out: string[] = [];
  for await (const e of sb.logs(container ? { container } : {})) out.push(e.data.toString());
  return out.join('');
}

/** Several containers, init containers, scratch volumes and the startup probe, through the gateway onto a local runner. */
describe('gateway: sandboxes with several containers (local runner)', () => {
  const cluster = useCluster({ runnerIds: ['r-large'] });
  const client = (): PaddockClient => new PaddockClient({ baseUrl: cluster().gw.url, apiKey: cluster().token });

  it('a sidecar writes into a shared scratch volume and the primary reads it; an init container output is seen by the primary', async () => {
    const spec = {
      primaryContainer: 'app',
      containers: [
        {
          name: 'app',
          image: IMAGE,
          command: ['sh', '-c', 'while [ ! -s /data/note ]; do sleep 0.05; done; cat /data/seed.txt /data/note; sleep 600'],
          volumeMounts: [{ volume: 'scratch', mountPath: '/data' }],
        },
        {
          name: 'writer',
          image: IMAGE,
          command: ['sh', '-c', 'echo from-sidecar > /shared/note; echo sidecar-up; sleep 600'],
          environmentVariables: { ROLE: 'writer' },
          volumeMounts: [{ volume: 'scratch', mountPath: '/shared' }],
        },
      ],
      initContainers: [{ name: 'seed', image: IMAGE, command: ['sh', '-c', 'echo from-init > /out/seed.txt'], volumeMounts: [{ volume: 'scratch', mountPath: '/out' }] }],
      volumes: [{ name: 'scratch', scratch: { size: '16Mi', medium: 'STORAGE_MEDIUM_MEMORY' } }],
    };
    await using sb = await Sandbox.run(spec, { client: client() });
    await expect.poll(() => logsOf(sb), { timeout: 20_000 }).toBe('from-init\nfrom-sidecar\n');
    expect(await logsOf(sb, 'writer')).toBe('sidecar-up\n');
    const inWriter = await sb.exec(['sh', '-c', 'echo "$ROLE"; cat /shared/seed.txt'], { container: 'writer' }).result();
    expect(inWriter.stdout.toString()).toBe('writer\nfrom-init\n');
    const status = (await sb.refresh()).status as StatusBody['status'];
    expect(status.containerStatuses?.map((c) => [c.name, c.state, c.exitCode])).toEqual([
      ['seed', 'terminated', 0],
      ['app', 'running', undefined],
      ['writer', 'running', undefined],
    ]);
    const unknown = await http(cluster().gw.url, 'POST', `/v1/sandboxes/${sb.sandboxId}:exec`, cluster().token, { command: ['true'], container: 'ghost' });
    expect(unknown.status).toBe(400);
    expect(unknown.text).toContain('container \\"ghost\\" is not a container of this sandbox');
  });

  it('an init container that fails fails the sandbox with a reason naming it', async () => {
    const c = cluster();
    const created = await http(c.gw.url, 'POST', '/v1/sandboxes', c.token, {
      containers: [{ image: IMAGE, command: ['echo', 'never'] }],
      initContainers: [{ name: 'check', image: IMAGE, command: ['sh', '-c', 'exit 5'] }],
    });
    expect(created.status).toBe(200);
    const id = (created.json as StatusBody).sandboxId;
    await expect.poll(async () => ((await http(c.gw.url, 'GET', `/v1/sandboxes/${id}`, c.token)).json as StatusBody).status.state, { timeout: 20_000 }).toBe('STATE_FAILED');
    const { status } = (await http(c.gw.url, 'GET', `/v1/sandboxes/${id}`, c.token)).json as StatusBody;
    expect([status.stateReason, status.message]).toEqual(['INIT_CONTAINER_FAILED', 'init container "check" exited with code 5']);
  });

  it('a startup probe that never passes fails the sandbox with a reason; one that passes gates RUNNING', async () => {
    const c = cluster();
    const never = await http(c.gw.url, 'POST', '/v1/sandboxes', c.token, {
      containers: [{ image: IMAGE, command: ['sleep', '600'], startupProbe: { exec: ['test', '-e', '/tmp/never'], periodSeconds: 0.1, failureThreshold: 3 } }],
    });
    expect(never.status).toBe(200);
    const id = (never.json as StatusBody).sandboxId;
    await expect.poll(async () => ((await http(c.gw.url, 'GET', `/v1/sandboxes/${id}`, c.token)).json as StatusBody).status.state, { timeout: 20_000 }).toBe('STATE_FAILED');
    const { status } = (await http(c.gw.url, 'GET', `/v1/sandboxes/${id}`, c.token)).json as StatusBody;
    expect(status.stateReason).toBe('STARTUP_PROBE_FAILED');
    expect(status.message).toContain('failed 3 times (failureThreshold 3); last: exited with code 1');

    await using ok = await Sandbox.run(
      { containers: [{ image: IMAGE, command: ['sh', '-c', 'sleep 0.3; touch /tmp/ready; sleep 600'], startupProbe: { exec: ['test', '-e', '/tmp/ready'], periodSeconds: 0.1, failureThreshold: 50 } }] },
      { client: client() },
    );
    expect(ok.state).toBe('STATE_RUNNING');
    expect((await ok.exec(['test', '-e', '/tmp/ready']).result()).exitCode).toBe(0);
  });

  it('refuses a malformed startup probe at create, naming the field', async () => {
    const c = cluster();
    const bad = await http(c.gw.url, 'POST', '/v1/sandboxes', c.token, { containers: [{ image: IMAGE, startupProbe: { exec: [] } }] });
    expect(bad.status).toBe(400);
    expect(bad.text).toContain('containers[0].startupProbe.exec');
  });
});
