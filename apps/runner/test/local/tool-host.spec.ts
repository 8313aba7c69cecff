import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TOOL_HOST_ENTRY, ToolHost } from '../../src/backend/local/net/tool-host';
import { supervisorSourceDir } from '../../src/backend/local/supervisor-files';
import { processAlive } from '@paddock/testing';

/** The long-lived Python process that runs the links' `ip` commands for the runner (system python3). */
describe('local backend: tool host', () => {
  let host: ToolHost;

  beforeEach(() => {
    host = new ToolHost('/usr/bin/python3');
  });
  afterEach(() => host.close());

  it('answers a tool with its stdout, hands it its input, and runs it in the host, not the runner', async () => {
    expect(await host.run('/bin/echo', ['a', 'b c'])).toBe('a b c\n');
    expect(await host.run('/bin/cat', [], 'netns add x\nlink set y up\n')).toBe('netns add x\nlink set y up\n');
    // The tool's parent is the host: the runner's own process forked nothing.
    const parent = Number((await host.run('/bin/sh', ['-c', 'echo $PPID'])).trim());
    expect(parent).toBe(host.pid);
    expect(parent).not.toBe(process.pid);
  });

  it("refuses a failing tool with its own error text, a missing one by name, and goes on", async () => {
    await expect(host.run('/bin/sh', ['-c', 'echo "Cannot find device veth9" >&2; exit 1'])).rejects.toThrow(
      /^\/bin\/sh -c .*: Cannot find device veth9$/,
    );
    await expect(host.run('/bin/sh', ['-c', 'exit 3'])).rejects.toThrow(/: exit 3$/);
    await expect(host.run('/nonexistent/ip', ['-batch', '-'])).rejects.toThrow(/^\/nonexistent\/ip -batch -: \/nonexistent\/ip: No such file or directory$/);
    expect(await host.run('/bin/echo', ['still here'])).toBe('still here\n');
  });

  it('runs tools concurrently, each answered with its own outcome', async () => {
    // A barrier: each tool waits until all twenty have started, so one at a time would never end.
    const gate = mkdtempSync(join(tmpdir(), 'pdk-toolhost-'));
    try {
      const script = (i: number): string =>
        `touch ${gate}/${i}; while [ "$(ls ${gate} | wc -l)" -lt 20 ]; do sleep 0.01; done; ` + (i % 5 === 4 ? `echo no${i} >&2; exit 1` : `echo ${i}`);
      const outcomes = await Promise.allSettled(Array.from({ length: 20 }, (_, i) => host.run('/bin/sh', ['-c', script(i)])));
      outcomes.forEach((o, i) => {
        if (i % 5 === 4) expect(o).toMatchObject({ status: 'rejected', reason: new Error(`/bin/sh -c ${script(i)}: no${i}`) });
        else expect(o).toEqual({ status: 'fulfilled', value: `${i}\n` });
      });
    } finally {
      rmSync(gate, { recursive: true, force: true });
    }
  });

  it("runs tools with none of the runner's environment", async () => {
    process.env.PADDOCK_TOOL_HOST_TEST_SECRET = 'not-for-ip';
    try {
      const env = (await host.run('/usr/bin/env', [])).trim().split('\n').sort();
      expect(env).toEqual(['LC_ALL=C', 'PATH=/usr/sbin:/usr/bin:/sbin:/bin']);
      const own = readFileSync(`/proc/${host.pid ?? 0}/environ`, 'utf8').split('\0').filter(Boolean);
      expect(own.sort()).toEqual(['LC_ALL=C', 'PATH=/usr/sbin:/usr/bin:/sbin:/bin']);
    } finally {
      delete process.env.PADDOCK_TOOL_HOST_TEST_SECRET;
    }
  });

  it('refuses the runs of a host that died, starts another for the next, and close() leaves none', async () => {
    await host.run('/bin/true', []);
    const first = host.pid ?? 0;
    const inFlight = host.run('/bin/sleep', ['5']);
    process.kill(first, 'SIGKILL');
    await expect(inFlight).rejects.toThrow(/^\/bin\/sleep 5: the runner's tool host ended/);
    expect(await host.run('/bin/echo', ['again'])).toBe('again\n');
    const second = host.pid ?? 0;
    expect(second).not.toBe(first);
    const cut = host.run('/bin/sleep', ['5']);
    host.close();
    await expect(cut).rejects.toThrow(/the runner closed its tool host/);
    await expect.poll(() => processAlive(second)).toBe(false);
    await expect(host.run('/bin/true', [])).rejects.toThrow(/closed/);
  });

  it('ends on its own when the runner goes away (end of file on its stdin), and answers a bad request by its id', async () => {
    const child = spawn('/usr/bin/python3', ['-S', '-E', '-B', join(supervisorSourceDir(), TOOL_HOST_ENTRY)], { stdio: ['pipe', 'pipe', 'inherit'] });
    const lines: string[] = [];
    child.stdout.setEncoding('utf8').on('data', (t: string) => lines.push(...t.split('\n').filter(Boolean)));
    child.stdin.write('{"id": 7, "argv": []}\nnot json\n');
    await expect.poll(() => lines.length).toBe(2);
    expect(JSON.parse(lines[0] ?? '')).toEqual({ id: 7, error: 'bad request: argv must be a non-empty list of strings, input a string' });
    expect(JSON.parse(lines[1] ?? '')).toMatchObject({ id: null, error: expect.stringMatching(/^bad request: /) as string });
    const exited = new Promise((r) => child.once('exit', (code) => r(code)));
    child.stdin.end();
    expect(await exited).toBe(0);
  });
});
