import { randomUUID } from 'node:crypto';
import { PaddockClient, Sandbox } from '@paddock/sdk';
import { waitFor } from '@paddock/testing';
import { specWith, useCluster, type Cluster } from './support/cluster';
import { http } from './support/infra';

interface View {
  sandboxId: string;
  status: { state: string; stateReason?: string };
}
interface Purged {
  purgeCount: number;
  failedSandboxIds: string[];
  retryableFailedSandboxIds: string[];
}
interface ErrorBody {
  code: string;
  message: string;
  details?: { fieldViolations?: { field: string; rule: string }[] }[];
}

const ENDED = new Set(['STATE_COMPLETED', 'STATE_FAILED']);
const violationsOf = (b: unknown) => (b as ErrorBody).details?.flatMap((d) => d.fieldViolations ?? []) ?? [];

/** `POST /v1/sandboxes:purge` (PurgeSandboxes) against real parts. */
describe('gateway :purge', () => {
  const cluster = useCluster({ runnerIds: ['r-medium'] });
  let c: Cluster;
  beforeEach(() => {
    c = cluster();
  });

  const create = async (token: string, tags: string[]): Promise<string> => {
    const r = await http(c.gw.url, 'POST', '/v1/sandboxes', token, { spec: specWith('100m', '64Mi', { tags }) });
    expect(r.status, r.text).toBe(200);
    return (r.json as View).sandboxId;
  };
  const stateOf = async (token: string, id: string): Promise<string> => ((await http(c.gw.url, 'GET', `/v1/sandboxes/${id}`, token)).json as View).status.state;
  const running = (token: string, ids: string[]) =>
    Promise.all(ids.map((id) => http(c.gw.url, 'GET', `/v1/sandboxes/${id}:wait?timeoutSeconds=30`, token)));

  it('stops exactly the live sandboxes carrying every tag; dryRun only counts them', async () => {
    const run = randomUUID().slice(0, 8);
    const both = await create(c.token, [run, 'batch']);
    const bothToo = await create(c.token, [run, 'batch', 'extra']);
    const onlyRun = await create(c.token, [run]);
    await running(c.token, [both, bothToo, onlyRun]);

    // Through the SDK, as a user would.
    const client = new PaddockClient({ baseUrl: c.gw.url, apiKey: c.token });
    expect(await Sandbox.purge({ client, tags: [run, 'batch'], dryRun: true })).toEqual({ purgeCount: 2, failedSandboxIds: [], retryableFailedSandboxIds: [] });
    expect(await stateOf(c.token, both)).toBe('STATE_RUNNING');

    expect(await Sandbox.purge({ client, tags: [run, 'batch'] })).toEqual({ purgeCount: 2, failedSandboxIds: [], retryableFailedSandboxIds: [] } satisfies Purged);
    for (const id of [both, bothToo]) {
      await waitFor(async () => ENDED.has(await stateOf(c.token, id)) || undefined, { timeoutMs: 30_000, what: `${id} ended` });
      expect(((await http(c.gw.url, 'GET', `/v1/sandboxes/${id}`, c.token)).json as View).status.stateReason).toBe('STOPPED_BY_USER');
    }
    expect(await stateOf(c.token, onlyRun)).toBe('STATE_RUNNING');
    // Nothing left to purge under those tags: an idempotent zero.
    expect((await http(c.gw.url, 'POST', '/v1/sandboxes:purge', c.token, { tags: [run, 'batch'] })).json).toEqual({ purgeCount: 0, failedSandboxIds: [], retryableFailedSandboxIds: [] });
  });

  it('purgeAll stops every live sandbox of the caller`s organization and none of another`s', async () => {
    const { adminToken: otherAdmin } = await c.infra.cp.createOrganization(`other-${randomUUID().slice(0, 8)}`);
    const { token: other } = await c.infra.cp.issueToken('SANDBOX_USER', otherAdmin);
    // Another organization's purgeAll sees only its own sandboxes (none): ours keep running.
    const ours = [await create(c.token, ['a']), await create(c.token, [])];
    await running(c.token, ours);
    expect((await http(c.gw.url, 'POST', '/v1/sandboxes:purge', other, { purgeAll: true })).json).toEqual({ purgeCount: 0, failedSandboxIds: [], retryableFailedSandboxIds: [] });
    for (const id of ours) expect(await stateOf(c.token, id)).toBe('STATE_RUNNING');

    const all = await http(c.gw.url, 'POST', '/v1/sandboxes:purge', c.token, { purgeAll: true });
    expect((all.json as Purged).purgeCount).toBeGreaterThanOrEqual(2);
    expect((all.json as Purged).failedSandboxIds).toEqual([]);
    for (const id of ours) await waitFor(async () => ENDED.has(await stateOf(c.token, id)) || undefined, { timeoutMs: 30_000, what: `${id} ended` });
    const left = await http(c.gw.url, 'GET', '/v1/sandboxes', c.token);
    expect((left.json as { sandboxes: View[] }).sandboxes.filter((s) => !ENDED.has(s.status.state) && s.status.state !== 'STATE_TERMINATING')).toEqual([]);
  });

  it('refuses an empty filter, tags with purgeAll, bad types and a requestId, naming the field; stops nothing', async () => {
    const keep = await create(c.token, ['keep']);
    const cases: [unknown, number, string, string | null][] = [
      [{}, 400, 'tags', 'required'],
      [{ tags: [] }, 400, 'tags', 'required'],
      [{ tags: ['keep'], purgeAll: true }, 400, 'purgeAll', 'mutually_exclusive'],
      [{ tags: 'keep' }, 400, 'tags', 'type'],
      [{ purgeAll: 'yes' }, 400, 'purgeAll', 'type'],
      [{ tags: ['keep'], everything: true }, 400, 'everything', 'unknown_field'],
      [{ tags: ['keep'], requestId: 'r-1' }, 501, '', null],
    ];
    for (const [body, status, field, rule] of cases) {
      const r = await http(c.gw.url, 'POST', '/v1/sandboxes:purge', c.token, body);
      expect(r.status, JSON.stringify(body)).toBe(status);
      if (rule) expect(violationsOf(r.json), JSON.stringify(body)).toEqual([expect.objectContaining({ field, rule })]);
      else expect(r.json).toMatchObject({ code: 'unimplemented', message: expect.stringContaining('requestId') as unknown });
    }
    expect(['STATE_PENDING', 'STATE_CREATING', 'STATE_RUNNING']).toContain(await stateOf(c.token, keep));
  });
});
