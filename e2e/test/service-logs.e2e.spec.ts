import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { prepareStart, startPaddock, type StartSetup } from '../src/pnpm-start';

interface LogLine {
  level: string;
  service: string;
  msg: string;
  requestId?: string;
  raw?: boolean;
  op?: string;
  route?: string;
}

/**
 * The services' logs of `pnpm start` run at a terminal (the case that used to write coloured
 * text): every line of every log file is one JSON object, and one request id joins the
 * gateway's and the runner's lines of a sandbox operation.
 */
describe('pnpm start service logs', () => {
  let setup: StartSetup;

  beforeAll(async () => {
    setup = await prepareStart('paddock_logs');
  }, 300_000);

  afterAll(async () => {
    await setup?.cleanup();
  });

  /** `.paddock/*.log` and the log of the runner the controller deployed. */
  function logFiles(): string[] {
    const top = readdirSync(setup.stateDir)
      .filter((f) => f.endsWith('.log'))
      .map((f) => join(setup.stateDir, f));
    const runners = join(setup.stateDir, 'controller', 'runners');
    const runnerLogs = existsSync(runners) ? readdirSync(runners).map((r) => join(runners, r, 'runner.log')) : [];
    return [...top, ...runnerLogs.filter((f) => existsSync(f))];
  }

  it('writes JSON lines only, and the same request id in the gateway and the runner lines of one create and one exec', async () => {
    const started = await startPaddock(setup, { terminal: true });
    const token = /admin token\s+(pdk_\S+)/.exec(started.output())?.[1] as string;
    expect(token).toMatch(/^pdk_/);
    const call = async (method: string, path: string, requestId: string | undefined, body?: unknown): Promise<{ status: number; json: Record<string, unknown>; requestId: string | null }> => {
      const r = await fetch(`${setup.gwUrl}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...(requestId ? { 'x-request-id': requestId } : {}) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: r.status, json: (await r.json()) as Record<string, unknown>, requestId: r.headers.get('x-request-id') };
    };
    const createId = `logs-create-${process.pid}`;
    const execId = `logs-exec-${process.pid}`;
    const created = await call('POST', '/v1/sandboxes', createId, { containers: [{ name: 'main', command: ['sleep', '600'] }] });
    expect(created.status, JSON.stringify(created.json)).toBe(200);
    // A client's own id comes back as sent; without one, the gateway assigns one.
    expect(created.requestId).toBe(createId);
    const sandboxId = created.json.sandboxId as string;
    const waited = await call('GET', `/v1/sandboxes/${sandboxId}:wait?timeoutSeconds=60`, undefined);
    expect(waited.status, JSON.stringify(waited.json)).toBe(200);
    expect(waited.requestId).toMatch(/^[0-9a-f-]{36}$/);
    const exec = await call('POST', `/v1/sandboxes/${sandboxId}:exec`, execId, { command: ['echo', 'hello'] });
    expect(exec.status, JSON.stringify(exec.json)).toBe(200);
    expect(exec.requestId).toBe(execId);
    expect((await call('DELETE', `/v1/sandboxes/${sandboxId}`, undefined)).status).toBe(200);
    await started.stop();

    const files = logFiles();
    const names = files.map((f) => f.slice(setup.stateDir.length + 1));
    expect(names).toEqual(expect.arrayContaining(['control-plane.log', 'gateway.log', 'controller.log', 'nats-server.log', 'controller/runners/local/runner.log']));
    const byFile = new Map<string, LogLine[]>();
    for (const [i, file] of files.entries()) {
      const lines = readFileSync(file, 'utf8').split('\n').filter((l) => l !== '');
      expect(lines.length, `${names[i]} is empty`).toBeGreaterThan(0);
      byFile.set(names[i] as string, lines.map((line) => {
        let rec: LogLine | undefined;
        try {
          rec = JSON.parse(line) as LogLine;
        } catch {
          // reported below with the file and the line
        }
        expect(rec, `${names[i]}: not a JSON line: ${line}`).toBeTypeOf('object');
        return rec as LogLine;
      }));
    }
    // The services write JSON themselves: only nats-server's own text is wrapped by `pnpm start`.
    for (const [name, recs] of byFile) {
      if (name === 'nats-server.log') continue;
      expect(recs.filter((r) => r.raw).map((r) => r.msg), name).toEqual([]);
    }
    const serviceOf: Record<string, string> = { 'control-plane.log': 'control-plane', 'gateway.log': 'gateway', 'controller.log': 'controller', 'controller/runners/local/runner.log': 'runner' };
    for (const [name, service] of Object.entries(serviceOf)) {
      expect([...new Set(byFile.get(name)?.map((r) => r.service))], name).toEqual([service]);
    }
    const gateway = byFile.get('gateway.log') ?? [];
    const runner = byFile.get('controller/runners/local/runner.log') ?? [];
    for (const [id, route, op] of [
      [createId, '/v1/sandboxes', 'create'],
      [execId, '/v1/sandboxes/:idVerb', 'exec'],
    ] as const) {
      expect(gateway.filter((r) => r.requestId === id).map((r) => [r.msg, r.route]), `gateway lines of ${id}`).toContainEqual(['request', route]);
      expect(runner.filter((r) => r.requestId === id).map((r) => [r.msg, r.op]), `runner lines of ${id}`).toContainEqual(['rpc', op]);
    }
  });
});
