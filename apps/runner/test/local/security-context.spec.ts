import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { destroyBackend, launchRunning, makeBackend, spec, type TestBackend } from './helpers';

/** A process's uid, gid and capability sets as `/proc/<pid>/status` shows them to whoever reads it. */
const STATUS_PY = "import re;s=open('/proc/self/status').read();print(' '.join(re.search(k+r':\\s+(\\S+)',s).group(1) for k in ('Uid','Gid','CapEff','CapBnd')))";
const bindPy = (port: number): string =>
  `import socket\ns=socket.socket()\ntry:\n  s.bind(('127.0.0.1',${port})); print('bound')\nexcept OSError as e:\n  print('refused', e.errno)`;

/** The host uid and effective capabilities of the sandbox's main process (the `sleep` its bwrap runs), read from the host's /proc. */
function hostViewOfMain(t: TestBackend, id: string): { uid: number; capEff: string } {
  const plan = JSON.parse(readFileSync(`${t.stateDir}/sandboxes/${id}/plan.json`, 'utf8')) as { cgroupProcs: string[] };
  const pids = readFileSync(plan.cgroupProcs[0] as string, 'utf8').split('\n').filter(Boolean);
  const sleeper = pids.find((pid) => {
    try {
      return readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'sleep';
    } catch {
      return false;
    }
  });
  if (!sleeper) throw new Error(`no sleep among ${pids.join(', ')}`);
  const status = readFileSync(`/proc/${sleeper}/status`, 'utf8');
  return { uid: Number(/^Uid:\s+(\d+)/m.exec(status)?.[1]), capEff: /^CapEff:\s+(\S+)/m.exec(status)?.[1] ?? '' };
}

describe('local backend: securityContext (runAsUser, runAsGroup, NET_BIND_SERVICE)', () => {
  let t: TestBackend;
  beforeAll(() => {
    t = makeBackend();
  });
  afterAll(async () => {
    const left = await destroyBackend(t);
    expect(left).toEqual({ leftoverProcesses: [], leftoverCgroups: [] });
  });

  it('runs the main process, execs and file writes as runAsUser/runAsGroup inside, the unprivileged host uid outside', async () => {
    await launchRunning(
      t,
      spec('as-1000', {
        command: ['sleep', '300'],
        securityContext: { runAsUser: 1000, runAsGroup: 2000 },
        files: [{ path: '/workspace/seed.txt', content: Buffer.from('seeded') }],
      }),
    );
    const r = await t.backend.exec('as-1000', { argv: ['sh', '-c', 'id -u; id -g; stat -c "%u:%g" /workspace/seed.txt; cat /workspace/seed.txt; echo mine > /workspace/new && cat /workspace/new'] });
    expect(r.stderr.toString()).toBe('');
    expect(r.stdout.toString()).toBe('1000\n2000\n1000:2000\nseededmine\n');
    await t.backend.writeFile('as-1000', '/workspace/api.txt', Buffer.from('from the api'));
    const api = await t.backend.exec('as-1000', { argv: ['sh', '-c', 'stat -c "%u:%g" /workspace/api.txt; cat /workspace/api.txt'] });
    expect(api.stdout.toString()).toBe('1000:2000\nfrom the api');
    expect(hostViewOfMain(t, 'as-1000')).toEqual({ uid: 65534, capEff: '0000000000000000' });
  });

  it('runAsUser 0 is root in name only: no capability, no other id, host uid 65534', async () => {
    await launchRunning(t, spec('as-root', { command: ['sleep', '300'], securityContext: { runAsUser: 0, runAsGroup: 0 } }));
    const st = await t.backend.exec('as-root', { argv: ['python3', '-c', STATUS_PY] });
    // uid 0 inside, and neither the exec nor what it starts holds any capability, not even in the bounding set.
    expect(st.stdout.toString().trim()).toMatch(/^0 0 0000000000000000 0000000000000000$/);
    const attempts = await t.backend.exec('as-root', {
      argv: [
        'python3',
        '-c',
        [
          'import ctypes, os',
          'libc = ctypes.CDLL(None, use_errno=True)',
          'ok = []',
          "open('/workspace/f', 'w').close()",
          "for name, f in (('setuid(1)', lambda: os.setuid(1)), ('chown', lambda: os.chown('/workspace/f', 1, 1)), ('write /usr', lambda: open('/usr/paddock-x', 'w'))):",
          '  try: f(); ok.append(name)',
          '  except OSError: pass',
          "if libc.unshare(0x10000000) == 0: ok.append('unshare user')",
          "if libc.mount(b'none', b'/tmp', b'tmpfs', 0, None) == 0: ok.append('mount')",
          'print(ok)',
        ].join('\n'),
      ],
    });
    expect(attempts.stderr.toString()).toBe('');
    expect(attempts.stdout.toString()).toBe('[]\n');
    expect(hostViewOfMain(t, 'as-root')).toEqual({ uid: 65534, capEff: '0000000000000000' });
  });

  it('NET_BIND_SERVICE lets the sandbox bind port 80 in its own network namespace only', async () => {
    const hostLowPorts = readFileSync('/proc/sys/net/ipv4/ip_unprivileged_port_start', 'utf8');
    await launchRunning(t, spec('low-ports', { command: ['python3', '-c', `${bindPy(80)}\ns.listen(1)\nimport time\ntime.sleep(300)`], securityContext: { capabilitiesAdd: ['NET_BIND_SERVICE'] } }));
    await launchRunning(t, spec('no-low-ports', { command: ['sleep', '300'] }));
    const held = await t.backend.exec('low-ports', { argv: ['python3', '-c', `${STATUS_PY}\n${bindPy(81)}`] });
    // Exactly CAP_NET_BIND_SERVICE (bit 10), also in the bounding set: nothing else can be regained.
    expect(held.stdout.toString()).toBe('65534 65534 0000000000000400 0000000000000400\nbound\n');
    const logs = await t.backend.exec('low-ports', { argv: ['sh', '-c', 'cat /proc/net/tcp | grep -c " 0100007F:0050 .* 0A "'] });
    expect(logs.stdout.toString().trim()).toBe('1');
    // The control: without the capability the same bind is refused (EACCES).
    const control = await t.backend.exec('no-low-ports', { argv: ['python3', '-c', bindPy(80)] });
    expect(control.stdout.toString()).toBe('refused 13\n');
    // Outside: the host's own knob is untouched and its port 80 is not the sandbox's.
    expect(readFileSync('/proc/sys/net/ipv4/ip_unprivileged_port_start', 'utf8')).toBe(hostLowPorts);
    const reached = await new Promise<boolean>((resolve) => {
      const c = connect(80, '127.0.0.1');
      c.once('connect', () => {
        c.destroy();
        resolve(true);
      });
      c.once('error', () => resolve(false));
    });
    expect(reached).toBe(false);
  });

  it('a sidecar runs, and is exec-ed, as its own runAsUser', async () => {
    await launchRunning(
      t,
      spec('pod-users', {
        command: ['sleep', '300'],
        primaryName: 'main',
        securityContext: { runAsUser: 1001 },
        sidecars: [{ name: 'side', image: '', command: ['sleep', '300'], env: {}, files: [], volumeMounts: [], securityContext: { runAsUser: 1002, runAsGroup: 1003 } }],
      }),
    );
    const main = await t.backend.exec('pod-users', { argv: ['sh', '-c', 'id -u; id -g'] });
    expect(main.stdout.toString()).toBe('1001\n65534\n');
    // The exec and the sidecar's own processes (its namespace's pid 1 is its bwrap's init).
    const side = await t.backend.exec('pod-users', { container: 'side', argv: ['sh', '-c', 'id -u; id -g; stat -c %u:%g /proc/1'] });
    expect(side.stdout.toString()).toBe('1002\n1003\n1002:1003\n');
  });
});
