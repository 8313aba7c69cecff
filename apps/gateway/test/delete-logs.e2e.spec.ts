import { PaddockClient, PaddockError, Sandbox } from '@paddock/sdk';
import { IMAGE, useCluster } from './support/cluster';
import { http } from './support/infra';

interface ErrorBody {
  code: string;
  message: string;
  details?: { reason?: string }[];
}
const reasonOf = (b: unknown): string | undefined => (b as ErrorBody).details?.find((d) => d.reason)?.reason;

/** DeleteSandboxLogs (`DELETE /v1/sandboxes/{id}/logs`) against real parts. */
describe('gateway: DeleteSandboxLogs', () => {
  const cluster = useCluster({ runnerIds: ['r-medium'] });

  it('refuses while the sandbox is live, destroys the logs once it has ended, idempotently, and then refuses to serve them', async () => {
    const c = cluster();
    const client = new PaddockClient({ baseUrl: c.gw.url, apiKey: c.token });
    const sb = await Sandbox.create({ containers: [{ image: IMAGE, command: ['/bin/sh', '-c', 'echo secret-token; sleep 30'] }] }, { client });
    await sb.wait();
    const collect = async (): Promise<string> => {
      const out: string[] = [];
      for await (const e of sb.logs()) out.push(e.data.toString());
      return out.join('');
    };
    await expect.poll(collect, { timeout: 10_000 }).toContain('secret-token');

    const live = await http(c.gw.url, 'DELETE', `/v1/sandboxes/${sb.sandboxId}/logs`, c.token);
    expect(live.status).toBe(400);
    expect(reasonOf(live.json)).toBe('CWSANDBOX_SANDBOX_NOT_TERMINAL');
    expect((live.json as ErrorBody).message).toBe(`sandbox ${sb.sandboxId} is STATE_RUNNING: the logs of a live sandbox cannot be deleted; stop it first`);
    expect(await collect()).toContain('secret-token');

    await sb.stop();
    await expect.poll(async () => (await sb.refresh()).status.state, { timeout: 15_000 }).toBe('STATE_COMPLETED');
    await sb.deleteLogs();
    await sb.deleteLogs();
    const read = await http(c.gw.url, 'GET', `/v1/sandboxes/${sb.sandboxId}/logs`, c.token);
    expect(read.status).toBe(400);
    expect(reasonOf(read.json)).toBe('CWSANDBOX_LOGS_DELETED');
    expect((read.json as ErrorBody).message).toMatch(new RegExp(`^the logs of sandbox ${sb.sandboxId} were deleted at \\d{4}-\\d\\d-\\d\\dT`));
    const viaSdk = await collect().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(viaSdk).toBeInstanceOf(PaddockError);
    expect((viaSdk as PaddockError).reason).toBe('CWSANDBOX_LOGS_DELETED');
    // Idempotent over plain HTTP too.
    const again = await http(c.gw.url, 'DELETE', `/v1/sandboxes/${sb.sandboxId}/logs`, c.token);
    expect(again.status).toBe(200);
    expect(again.json).toEqual({});
  });

  it('gives a missing or foreign sandbox the same not_found as any other route', async () => {
    const c = cluster();
    const r = await http(c.gw.url, 'DELETE', '/v1/sandboxes/00000000-0000-4000-8000-000000000000/logs', c.token);
    expect(r.status).toBe(404);
    expect(reasonOf(r.json)).toBe('CWSANDBOX_SANDBOX_NOT_FOUND');
  });
});
