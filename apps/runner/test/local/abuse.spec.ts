import { createServer, type Server } from 'node:net';
import type { AddressInfo } from 'node:net';
import { waitFor } from '@paddock/testing';
import { cgroupValue, destroyBackend, launchRunning, makeBackend, spec, waitForState, type TestBackend } from './helpers';

const MiB = 1024 * 1024;

/** Resource abuse stays inside the sandbox, and escape preconditions fail. */
describe('local backend: isolation and resource abuse', () => {
  let t: TestBackend;
  beforeAll(async () => {
    t = makeBackend({ logCapBytes: 1 * MiB });
    await launchRunning(t, spec('neighbour'));
  });
  afterAll(async () => {
    const left = await destroyBackend(t);
    expect(left).toEqual({ leftoverProcesses: [], leftoverCgroups: [] });
  });

  it('SB-1: a fork bomb is capped by pids.max while a neighbour keeps answering exec', async () => {
    await launchRunning(t, spec('forkbomb', { pidsMax: 64 }));
    const bomb = await t.backend.execStream('forkbomb', { argv: ['sh', '-c', 'b() { b | b & }; b; sleep 60'] });
    bomb.stdout.resume();
    bomb.stderr.resume();
    let peak = 0;
    const latencies: number[] = [];
    const until = Date.now() + 3000;
    while (Date.now() < until) {
      peak = Math.max(peak, Number(cgroupValue(t, 'forkbomb', 'pids', 'pids.current')));
      const s = Date.now();
      const r = await t.backend.exec('neighbour', { argv: ['echo', 'alive'] });
      latencies.push(Date.now() - s);
      expect(r.stdout.toString()).toBe('alive\n');
    }
    expect(Number(cgroupValue(t, 'forkbomb', 'pids', 'pids.events').split(' ')[1])).toBeGreaterThan(0); // forks were refused
    expect(peak).toBeLessThanOrEqual(64);
    expect(Math.max(...latencies)).toBeLessThan(5000);
    await t.backend.stop('forkbomb', 0, 'STOPPED_BY_USER');
    await t.backend.reap('forkbomb', 'STOPPED_BY_USER');
  }, 60_000);

  it('SB-2: a memory bomb is OOM-killed in its own cgroup and reported as OUT_OF_MEMORY', async () => {
    await t.backend.launch(
      spec('membomb', { memoryBytes: 64 * MiB, command: ['python3', '-c', 'x = []\nwhile True: x.append(bytearray(8 * 1024 * 1024))'] }),
    );
    const end = await waitForState(t, 'membomb', ['STATE_COMPLETED', 'STATE_FAILED'], 30_000);
    expect(end).toMatchObject({ state: 'STATE_FAILED', reason: 'OUT_OF_MEMORY' });
    // The kill happened in the bomb's cgroup only: the neighbour's counter is still zero.
    expect(cgroupValue(t, 'neighbour', 'memory', 'memory.oom_control')).toMatch(/^oom_kill 0$/m);
    const r = await t.backend.exec('neighbour', { argv: ['echo', 'still here'] });
    expect(r.stdout.toString()).toBe('still here\n');
    await t.backend.reap('membomb', 'RUNNER_DELETED');
  }, 60_000);

  it('SB-3: filling the disk stops at the workspace cap (±5 %)', async () => {
    const cap = 32 * MiB;
    await launchRunning(t, spec('diskfill', { diskBytes: cap, memoryBytes: 256 * MiB }));
    const r = await t.backend.exec('diskfill', { argv: ['sh', '-c', 'dd if=/dev/zero of=/workspace/fill bs=1M count=1000; echo "$?"; stat -c %s /workspace/fill'] });
    const [ddExit, size] = r.stdout.toString().trim().split('\n');
    expect(ddExit).not.toBe('0');
    expect(r.stderr.toString()).toContain('No space left on device');
    const written = Number(size);
    expect(Math.abs(written - cap) / cap).toBeLessThan(0.05);
    await t.backend.reap('diskfill', 'RUNNER_DELETED');
  }, 60_000);

  it('SB-5: a CPU hog is held to its quota and a neighbour still progresses', async () => {
    // Busy loops for 2 s of wall time; each prints the CPU seconds it got.
    const spin = 'import os,time\nt=time.time()\nwhile time.time()-t<2: pass\nprint(os.times()[0]+os.times()[1])';
    await launchRunning(t, spec('hog', { cpuMillis: 200 }));
    // The launch ran on a boosted quota; by RUNNING the workload is back to exactly what it asked for.
    expect(cgroupValue(t, 'hog', 'cpu', 'cpu.cfs_quota_us')).toBe('20000');
    const t0 = Date.now();
    const hog = t.backend.exec('hog', { argv: ['sh', '-c', `python3 -c '${spin}' & python3 -c '${spin}'; wait`] }).then((r) => ({ r, wallS: (Date.now() - t0) / 1000 }));
    const near = t.backend.exec('neighbour', { argv: ['python3', '-c', spin] });
    const [{ r: h, wallS }, n] = await Promise.all([hog, near]);
    const hogCpu = h.stdout.toString().trim().split('\n').map(Number).reduce((a, b) => a + b, 0);
    const nearCpu = Number(n.stdout.toString().trim());
    // The cgroup cannot get more than its quota (0.2 core) over the exec's real elapsed time; on a
    // loaded machine the two busy loops live longer than their 2 s, so the bound is the wall time.
    expect(wallS).toBeGreaterThanOrEqual(2);
    expect(hogCpu).toBeLessThan(0.2 * wallS * 1.25);
    expect(hogCpu).toBeLessThan(2 * 2 * 0.5); // far below what two unthrottled loops would burn
    // Two busy loops want two cores: the quota throttled them, unless the machine's other load
    // never let them reach 0.2 core in the first place (then there was nothing to throttle).
    const throttled = Number(/nr_throttled (\d+)/.exec(cgroupValue(t, 'hog', 'cpu', 'cpu.stat'))?.[1]);
    if (hogCpu > 0.2 * wallS * 0.9) expect(throttled).toBeGreaterThan(0);
    // The neighbour made progress despite the hog (how much depends on the machine's other load).
    expect(nearCpu).toBeGreaterThan(0.05);
    await t.backend.reap('hog', 'RUNNER_DELETED');
  }, 60_000);

  it('SB-6: an output flood is truncated at the log cap with a marker; runner memory stays flat', async () => {
    const rss0 = process.memoryUsage().rss;
    await t.backend.launch(spec('flood', { command: ['sh', '-c', 'head -c 200000000 /dev/zero; head -c 50000000 /dev/zero >&2; echo done'] }));
    await waitForState(t, 'flood', ['STATE_COMPLETED', 'STATE_FAILED'], 60_000);
    let total = 0;
    let text = '';
    for await (const c of t.backend.logs('flood', {})) {
      total += c.data.length;
      if (c.data.includes('paddock')) text += c.data.toString();
    }
    expect(text).toContain('output truncated at 1048576 bytes');
    expect(total).toBeLessThan(MiB + 200);
    expect(total).toBeGreaterThanOrEqual(MiB);
    expect(process.memoryUsage().rss - rss0).toBeLessThan(50 * MiB);
    const ex = await t.backend.exec('neighbour', { argv: ['head', '-c', '100000000', '/dev/zero'], maxOutputBytes: 64 * 1024 });
    expect(ex).toMatchObject({ stdoutBytes: 100_000_000, stdoutTruncated: true });
    expect(ex.stdout.length).toBe(64 * 1024);
    expect(process.memoryUsage().rss - rss0).toBeLessThan(50 * MiB);
    await t.backend.reap('flood', 'RUNNER_DELETED');
  }, 90_000);

  it('SB-7: the lifetime cap kills the whole tree on time, even a process ignoring SIGTERM', async () => {
    const started = Date.now();
    await launchRunning(t, spec('expiring', { lifetimeSeconds: 3, command: ['sh', '-c', 'trap "" TERM; sleep 1000 & sleep 1000 & wait'] }));
    const end = await waitForState(t, 'expiring', ['STATE_COMPLETED', 'STATE_FAILED'], 20_000);
    expect(end).toMatchObject({ state: 'STATE_FAILED', reason: 'LIFETIME_EXPIRED' });
    expect(end.at.getTime() - started).toBeLessThan(3000 + 5000);
    expect(t.backend.cgroupTree().listSandboxes()).not.toContain('expiring');
    await t.backend.reap('expiring', 'LIFETIME_EXPIRED');
  }, 30_000);

  describe('the in-sandbox exec daemon', () => {
    const execdPid = async (id: string): Promise<string> => {
      const r = await t.backend.exec(id, { argv: ['sh', '-c', 'for p in /proc/[0-9]*; do [ "$(cat $p/comm 2>/dev/null)" = paddock-execd ] && echo ${p#/proc/}; done'] });
      return r.stdout.toString().trim();
    };

    it('commands it spawns are in the sandbox cgroups, as the sandbox uid, with no capabilities', async () => {
      const r = await t.backend.exec('neighbour', { argv: ['sh', '-c', 'echo $$; id -u; grep CapEff /proc/self/status; sleep 1'] });
      const [pid, uid, capEff] = r.stdout.toString().trim().split('\n');
      expect(uid).not.toBe('0');
      expect(capEff).toMatch(/CapEff:\s+0+$/);
      // The daemon and everything it spawns count against the sandbox's own pids cgroup.
      expect(pid).toMatch(/^\d+$/);
      expect(Number(cgroupValue(t, 'neighbour', 'pids', 'pids.current'))).toBeGreaterThanOrEqual(2);
    });

    it('a workload cannot read the daemon (not dumpable) and killing it costs nothing: the next exec starts another', async () => {
      const first = await execdPid('neighbour');
      expect(first).toMatch(/^\d+$/);
      const peek = await t.backend.exec('neighbour', { argv: ['sh', '-c', `cat /proc/${first}/environ >/dev/null 2>&1 && echo readable || echo refused`] });
      expect(peek.stdout.toString()).toBe('refused\n');
      // Killed from the background, after this exec has been reported (killing one's own reporter
      // mid-command loses that command's exit status, nothing else).
      const kill = await t.backend.exec('neighbour', { argv: ['sh', '-c', `(sleep 0.2; kill -9 ${first}) </dev/null >/dev/null 2>&1 &`] });
      expect(kill.exitCode).toBe(0);
      await waitFor(async () => !(await t.backend.exec('neighbour', { argv: ['true'] }).then(() => execdPid('neighbour'))).split('\n').includes(first), {
        timeoutMs: 10_000,
        what: 'the first exec daemon gone',
      });
      const after = await t.backend.exec('neighbour', { argv: ['echo', 'still answering'] });
      expect(after.stdout.toString()).toBe('still answering\n');
      const second = await execdPid('neighbour');
      expect(second).toMatch(/^\d+$/);
      expect(second).not.toBe(first);
    });

    it('a missing command is exit 127 with the command named on stderr', async () => {
      const r = await t.backend.exec('neighbour', { argv: ['no-such-command-xyz'] });
      expect(r.exitCode).toBe(127);
      expect(r.stderr.toString()).toContain('no-such-command-xyz');
    });
  });

  it('SB-9: escape preconditions all fail inside the sandbox', async () => {
    const server: Server = createServer((s) => s.end('host!'));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    try {
      const probe = String.raw`
import ctypes, os, socket, errno
libc = ctypes.CDLL(None, use_errno=True)
def sys(nr, *a):
    r = libc.syscall(nr, *a)
    return 'ok' if r >= 0 else errno.errorcode[ctypes.get_errno()]
def try_(f):
    try:
        f(); return 'ok'
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))
cap = [l.split()[1] for l in open('/proc/self/status') if l.startswith('CapEff')][0]
print('capeff', cap)
print('ptrace', sys(101, 16, 1, 0, 0))
print('keyctl', sys(250, 0, 0, 0, 0))
print('bpf', sys(321, 0, 0, 0))
print('perf', sys(298, 0, 0, -1, -1, 0))
print('io_uring', sys(425, 1, 0))
print('raw', try_(lambda: socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)))
print('cgroup', try_(lambda: open('/sys/fs/cgroup/cgroup.procs', 'w').write('1')))
print('hostnet', try_(lambda: socket.create_connection(('127.0.0.1', ${port}), timeout=2)))
print('internet', try_(lambda: socket.create_connection(('1.1.1.1', 53), timeout=2)))
`;
      await t.backend.writeFile('neighbour', '/workspace/probe.py', Buffer.from(probe.replace('${port}', String(port))));
      const r = await t.backend.exec('neighbour', { argv: ['python3', '/workspace/probe.py'] });
      const got = Object.fromEntries(r.stdout.toString().trim().split('\n').map((l) => l.split(' ') as [string, string]));
      expect(got).toEqual({
        capeff: '0000000000000000',
        ptrace: 'EPERM',
        keyctl: 'EPERM',
        bpf: 'EPERM',
        perf: 'EPERM',
        io_uring: 'EPERM',
        raw: 'EPERM',
        cgroup: 'ENOENT',
        hostnet: 'ECONNREFUSED',
        internet: 'ENETUNREACH',
      });
      const mount = await t.backend.exec('neighbour', { argv: ['mount', '-t', 'tmpfs', 'x', '/tmp'] });
      expect(mount.exitCode).not.toBe(0);
      const userns = await t.backend.exec('neighbour', { argv: ['unshare', '-U', 'true'] });
      expect(userns.exitCode).not.toBe(0);
      const root = await t.backend.exec('neighbour', { argv: ['sh', '-c', 'echo x > /usr/evil; echo x > /etc/evil'] });
      expect(root.stderr.toString()).toContain('Read-only file system');
      // The main process carries the same restrictions as exec'd commands.
      await t.backend.launch(spec('probe-main', { command: ['python3', '/workspace/probe.py'], files: [{ path: '/workspace/probe.py', content: Buffer.from(probe.replace('${port}', String(port))) }] }));
      await waitForState(t, 'probe-main', ['STATE_COMPLETED', 'STATE_FAILED']);
      let out = '';
      for await (const c of t.backend.logs('probe-main', {})) out += c.data.toString();
      expect(Object.fromEntries(out.trim().split('\n').map((l) => l.split(' ')))).toEqual(got);
      await t.backend.reap('probe-main', 'RUNNER_DELETED');
    } finally {
      server.close();
    }
  }, 60_000);
});
