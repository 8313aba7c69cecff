import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { Sandbox, type SandboxSpec } from '@paddock/sdk';
import { hostAddress, probeFromHost, REPO_ROOT, secretScanArgv, tcpProbeArgv, type Reach, type SecretScanReport } from '@paddock/testing';
import { platformSecrets, startPlatformWithLocalRunner, type Platform } from '../src/platform';

/**
 * The escape suite: from inside real sandboxes of the platform's local runner (default policy,
 * created through the gateway as a user would), try to reach the platform and the host, read
 * another sandbox's data, gain privilege, and exhaust resources. Every attempt must fail, and the
 * platform must still serve a fresh sandbox afterwards. `pnpm test:escape` runs the full size
 * (PADDOCK_ESCAPE_SIZE=full); the default run a smaller one. Figures go to .vitest/escape-report.json.
 */
const FULL = process.env.PADDOCK_ESCAPE_SIZE === 'full';

interface Attempt {
  category: string;
  name: string;
  escaped: boolean;
  detail: string;
}

/** The well-known ports of the services a Paddock host runs beside it (Postgres, NATS, Redis, MariaDB, RabbitMQ). */
const WELL_KNOWN = FULL ? [5432, 4222, 6379, 3306, 5672] : [5432, 4222];

/** Python attempts: each prints {"escaped": bool, "detail": str}. */
const PY = {
  mount: `
import ctypes, json, os, subprocess
libc = ctypes.CDLL(None, use_errno=True)
os.makedirs('/tmp/m', exist_ok=True)
r = libc.mount(b'none', b'/tmp/m', b'tmpfs', 0, None); e = ctypes.get_errno()
b = subprocess.run(['mount', '-t', 'tmpfs', 'none', '/tmp/m'], capture_output=True).returncode
print(json.dumps({'escaped': r == 0 or b == 0, 'detail': 'mount(2) %d errno %d; mount(8) exit %d' % (r, e, b)}))`,
  ptrace: `
import ctypes, json, os, time
libc = ctypes.CDLL(None, use_errno=True)
pid = os.fork()
if pid == 0:
  time.sleep(5); os._exit(0)
a = libc.ptrace(16, pid, 0, 0); ea = ctypes.get_errno()
t = libc.ptrace(0, 0, 0, 0); et = ctypes.get_errno()
os.kill(pid, 9); os.waitpid(pid, 0)
print(json.dumps({'escaped': a == 0 or t == 0, 'detail': 'PTRACE_ATTACH child %d errno %d; PTRACE_TRACEME %d errno %d' % (a, ea, t, et)}))`,
  setuid: `
import json, os
ok = []
for name, f in (('setuid(0)', lambda: os.setuid(0)), ('setgid(0)', lambda: os.setgid(0)), ('setresuid(0,0,0)', lambda: os.setresuid(0, 0, 0)), ('setgroups([0])', lambda: os.setgroups([0]))):
  try:
    f(); ok.append(name)
  except OSError:
    pass
caps = [l for l in open('/proc/self/status') if l.startswith('CapEff')][0].split()[1]
print(json.dumps({'escaped': bool(ok) or int(caps, 16) != 0 or os.getuid() == 0, 'detail': 'uid %d, CapEff %s, succeeded: %s' % (os.getuid(), caps, ok)}))`,
  unshare: `
import ctypes, json, subprocess
libc = ctypes.CDLL(None, use_errno=True)
ok = []
for name, flag in (('user', 0x10000000), ('mount', 0x20000), ('net', 0x40000000), ('pid', 0x20000000)):
  if libc.unshare(flag) == 0: ok.append(name)
b = subprocess.run(['unshare', '-r', 'true'], capture_output=True).returncode
print(json.dumps({'escaped': bool(ok) or b == 0, 'detail': 'unshare(2) succeeded for %s; unshare -r exit %d' % (ok, b)}))`,
  hostFiles: `
import glob, json, os
found = []
for p in ['/etc/shadow', '/root', '/home', '/var/lib', '/run/paddock', '/work', '/srv', '/proc/sysrq-trigger:w', '/proc/sys/kernel/hostname:w'] + glob.glob('/tmp/paddock-*'):
  path, _, mode = p.partition(':')
  try:
    if mode == 'w':
      with open(path, 'w') as f: f.write('x')
      found.append('wrote ' + path)
    elif os.path.isdir(path):
      if os.listdir(path): found.append('listed ' + path)
    elif os.path.exists(path):
      open(path).read(1); found.append('read ' + path)
  except OSError:
    pass
print(json.dumps({'escaped': bool(found), 'detail': 'reached: %s' % found}))`,
  otherWorkspace: `
import glob, json, os, stat, sys
token = sys.argv[1]
hits = []
def check(p):
  # Regular files only: a FIFO or a device would block the read.
  try:
    st = os.stat(p)
    if stat.S_ISREG(st.st_mode) and st.st_size < 65536 and token in open(p, errors='ignore').read(): hits.append(p)
  except OSError:
    pass
for pattern in ['/proc/*/root/workspace/*', '/proc/*/cwd/*', '/tmp/paddock-*/**/secret.txt', '/run/paddock/**/secret.txt']:
  for p in glob.glob(pattern, recursive=True): check(p)
for root, dirs, files in os.walk('/'):
  dirs[:] = [d for d in dirs if os.path.join(root, d) not in ('/proc', '/sys', '/dev', '/usr')]
  for f in files: check(os.path.join(root, f))
print(json.dumps({'escaped': bool(hits), 'detail': 'found the other sandbox secret at %s' % hits if hits else 'not found'}))`,
  pids: `
import json, os
kids = []
err = ''
try:
  while len(kids) < 4096:
    pid = os.fork()
    if pid == 0:
      os.execv('/bin/sleep', ['sleep', '30'])
    kids.append(pid)
except OSError as e:
  err = str(e)
for k in kids:
  try: os.kill(k, 9)
  except OSError: pass
for k in kids:
  try: os.waitpid(k, 0)
  except OSError: pass
print(json.dumps({'escaped': len(kids) >= 1024, 'detail': '%d processes before the cap (%s)' % (len(kids), err)}))`,
  fds: `
import json, resource
fds = []
err = ''
try:
  while len(fds) < 1 << 20:
    fds.append(open('/dev/null'))
except OSError as e:
  err = str(e)
raised = True
try:
  resource.setrlimit(resource.RLIMIT_NOFILE, (1 << 20, 1 << 20))
except (OSError, ValueError):
  raised = False
print(json.dumps({'escaped': len(fds) > 4096 or raised, 'detail': '%d files before the cap (%s); raising the hard limit %s' % (len(fds), err, 'worked' if raised else 'refused')}))`,
  memory: `
import json, sys
limit = int(sys.argv[1])
chunks = []
while len(chunks) * (16 << 20) < 4 * limit:
  b = bytearray(16 << 20)
  for i in range(0, len(b), 4096): b[i] = 1
  chunks.append(b)
  print(len(chunks) * 16, flush=True)
print(json.dumps({'escaped': True, 'detail': 'allocated %d MiB (4x the limit)' % (len(chunks) * 16)}))`,
  disk: `
import json, os
st = os.statvfs('/workspace')
cap = st.f_blocks * st.f_frsize
written = 0
err = ''
try:
  with open('/workspace/fill', 'wb') as f:
    block = b'\\0' * (1 << 20)
    while written < 2 * cap:
      f.write(block); written += 1 << 20
    f.flush(); os.fsync(f.fileno())
except OSError as e:
  err = str(e)
print(json.dumps({'escaped': written > cap * 1.05, 'detail': 'wrote %d MiB of a %d MiB disk (%s)' % (written >> 20, cap >> 20, err)}))`,
};

function parseVerdict(line: string): { escaped: boolean; detail: string } | undefined {
  try {
    const v = JSON.parse(line) as unknown;
    if (typeof v === 'object' && v !== null && 'escaped' in v && typeof v.escaped === 'boolean' && 'detail' in v && typeof v.detail === 'string') {
      return { escaped: v.escaped, detail: v.detail };
    }
  } catch {
    // not a verdict line
  }
  return undefined;
}

/** Listens on `port` of every address if free, else of the host address alone (a service may hold loopback). */
async function listenWhereFree(port: number): Promise<Server | undefined> {
  for (const host of ['0.0.0.0', hostAddress()]) {
    const s = createServer((c) => {
      c.on('error', () => undefined);
      c.end('hello\n');
    });
    const bound = await new Promise<boolean>((resolve) => {
      s.once('error', () => resolve(false));
      s.listen(port, host, () => resolve(true));
    });
    if (bound) return s;
  }
  return undefined;
}

describe('escape suite: from inside default sandboxes of the local runner', () => {
  let p: Platform;
  const attempts: Attempt[] = [];
  const listeners: Server[] = [];
  const live: Sandbox[] = [];
  const sdk = (): { baseUrl: string; apiKey: string } => ({ baseUrl: p.gw.url, apiKey: p.token });
  const run = async (spec: SandboxSpec = {}): Promise<Sandbox> => {
    const sb = await Sandbox.run({ containers: [{ name: 'main', command: ['sleep', '600'] }], ...spec }, sdk());
    live.push(sb);
    return sb;
  };
  /** Runs one Python attempt in `sb`; a command killed by its cap (OOM) prints no verdict and did not escape. */
  const attempt = async (sb: Sandbox, category: string, name: string, py: string, args: string[] = []): Promise<Attempt> => {
    const r = await sb.exec(['python3', '-c', py, ...args], { timeoutSeconds: 120 }).result();
    const last = r.stdoutText.trim().split('\n').pop() ?? '';
    const v = parseVerdict(last);
    // No verdict is a kill by a cap (a signal: OOM), never a broken attempt passing for a failed escape.
    if (!v && r.exitCode >= 0 && r.exitCode < 128) throw new Error(`attempt ${name} did not run: exit ${r.exitCode}: ${r.stderrText.slice(-400)}`);
    const a: Attempt = v
      ? { category, name, escaped: v.escaped, detail: v.detail }
      : { category, name, escaped: false, detail: `killed at its cap: exit ${r.exitCode}, last output ${JSON.stringify(last.slice(-80))}` };
    attempts.push(a);
    return a;
  };
  const escapes = (category: string): Attempt[] => attempts.filter((a) => a.category === category && a.escaped);
  /** The platform is healthy: a fresh sandbox runs a command, and a sandbox that was running still answers. */
  const healthy = async (neighbour: Sandbox): Promise<void> => {
    const fresh = await run();
    expect((await fresh.exec(['echo', 'fresh']).result()).stdoutText).toBe('fresh\n');
    expect((await neighbour.exec(['echo', 'neighbour']).result()).stdoutText).toBe('neighbour\n');
    await fresh.stop();
  };

  let neighbour: Sandbox;
  beforeAll(async () => {
    p = await startPlatformWithLocalRunner();
    // Listen where the usual services would (unless one already does), so an open port is a real target.
    for (const port of WELL_KNOWN) {
      const s = await listenWhereFree(port);
      if (s) listeners.push(s);
    }
    neighbour = await run();
  }, 400_000);

  afterAll(async () => {
    const report = {
      size: FULL ? 'full' : 'small',
      at: new Date().toISOString(),
      attempts: attempts.length,
      escapes: attempts.filter((a) => a.escaped).length,
      byCategory: Object.fromEntries([...new Set(attempts.map((a) => a.category))].map((c) => [c, { attempts: attempts.filter((a) => a.category === c).length, escapes: escapes(c).length }])),
      list: attempts,
    };
    const dir = join(REPO_ROOT, 'e2e', '.vitest');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'escape-report.json'), `${JSON.stringify(report, null, 2)}\n`);
    console.log(`escape suite (${report.size}): ${report.attempts} attempts, ${report.escapes} escapes — ${JSON.stringify(report.byCategory)}`);
    for (const s of listeners) s.close();
    for (const sb of live) await sb.stop().catch(() => undefined);
    await p?.stop();
  }, 120_000);

  it('network: no platform port, on loopback, the host address or the sandbox gateway, answers', async () => {
    const sb = await run();
    const ports = [...WELL_KNOWN, p.pg.port, p.nats.port, Number(new URL(p.cp.url).port), Number(new URL(p.gw.url).port)];
    // The platform's own services listen on loopback; a stand-in on the host address makes that target live too.
    for (const port of ports.slice(WELL_KNOWN.length)) {
      const s = await listenWhereFree(port);
      if (s) listeners.push(s);
    }
    const route = (await sb.exec(['cat', '/proc/net/route']).result()).stdoutText;
    const gwHex = route.split('\n').find((l) => l.split(/\s+/)[1] === '00000000')?.split(/\s+/)[2];
    const hosts = ['127.0.0.1', hostAddress(), ...(gwHex ? [[...Buffer.from(gwHex, 'hex')].reverse().join('.')] : [])];
    const targets = hosts.flatMap((h) => ports.map((port) => `${h}:${port}`));
    const r = await sb.exec(tcpProbeArgv(targets), { timeoutSeconds: 60 }).result();
    const seen = JSON.parse(r.stdoutText) as Record<string, Reach>;
    for (const x of targets) {
      // The control: what the host itself reaches there (a service bound to loopback only is closed on the host address).
      const control = await probeFromHost(x);
      attempts.push({ category: 'network', name: `connect ${x}`, escaped: seen[x] === 'open', detail: `sandbox: ${seen[x]}; from the host: ${control}` });
    }
    // Every loopback and host-address target is live (the host reaches it), so each closed verdict means something.
    const hostSide = attempts.filter((a) => a.category === 'network' && !a.name.startsWith(`connect ${hosts[2] ?? '-'}:`));
    expect(hostSide.filter((a) => !a.detail.endsWith('from the host: open'))).toEqual([]);
    expect(escapes('network')).toEqual([]);
  }, 120_000);

  it("filesystem: another sandbox's workspace and the host's files are out of reach", async () => {
    const [a, b] = await Promise.all([run(), run()]);
    const token = `secret-${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`;
    await a.writeFile('/workspace/secret.txt', token);
    expect((await a.exec(['cat', '/workspace/secret.txt']).result()).stdoutText).toBe(token);
    await attempt(b, 'filesystem', "read another sandbox's workspace", PY.otherWorkspace, [token]);
    await attempt(b, 'filesystem', "read or write the host's files and /proc knobs", PY.hostFiles);
    expect(escapes('filesystem')).toEqual([]);
  }, 300_000);

  it('credentials: no platform token, database URL, NATS server or issued NATS user is readable in any process or file', async () => {
    const sb = await run();
    const { needles, credsFiles } = platformSecrets(p);
    const r = await sb.exec(secretScanArgv({ needles, since: Date.now(), absent: credsFiles }), { timeoutSeconds: 120 }).result();
    if (r.exitCode !== 0) throw new Error(`the credential scan did not run: exit ${r.exitCode}: ${r.stderrText.slice(-400)}`);
    const report = JSON.parse(r.stdoutText) as SecretScanReport;
    const found = [...report.hits.map((h) => `${h.needle} in ${h.where}`), ...report.present.map((f) => `${f} visible`)];
    const c = report.counts;
    attempts.push({
      category: 'credentials',
      name: "find the platform's credentials in /proc/*/environ, cmdline, open files, mounts and the filesystem",
      escaped: found.length > 0,
      detail: found.length ? found.join('; ') : `none of ${Object.keys(needles).length} values in ${c.environ} environs, ${c.cmdline} cmdlines, ${c.fds} open files, ${c.files} files (${c.bytes} bytes)`,
    });
    expect(c.files).toBeGreaterThan(10);
    expect(escapes('credentials')).toEqual([]);
  }, 120_000);

  it('privilege: mount, ptrace, setuid, nested namespaces all fail', async () => {
    const sb = await run();
    await attempt(sb, 'privilege', 'mount a filesystem', PY.mount);
    await attempt(sb, 'privilege', 'ptrace a process', PY.ptrace);
    await attempt(sb, 'privilege', 'change uid/gid to root', PY.setuid);
    await attempt(sb, 'privilege', 'unshare user/mount/net/pid namespaces', PY.unshare);
    expect(escapes('privilege')).toEqual([]);
  }, 120_000);

  it('exhaustion: pids and file descriptors stop at their caps, and the platform stays healthy', async () => {
    const sb = await run({ containers: [{ name: 'main', command: ['sleep', '600'], resources: { cpu: '500m', memory: '512Mi' } }] });
    await attempt(sb, 'exhaustion', 'exhaust pids (fork until refused)', PY.pids);
    await healthy(neighbour);
    await attempt(sb, 'exhaustion', 'exhaust file descriptors', PY.fds);
    await healthy(neighbour);
    expect(escapes('exhaustion')).toEqual([]);
  }, 180_000);

  it('exhaustion: memory and disk stop at their caps, and the platform stays healthy', async () => {
    // Sized down in the default run: the attempt is the same, the machine's RAM is shared.
    const mi = FULL ? 128 : 64;
    const sb = await run({ containers: [{ name: 'main', command: ['sleep', '600'], resources: { cpu: '500m', memory: `${mi}Mi` } }] });
    await attempt(sb, 'exhaustion', `exhaust memory (4x the ${mi} MiB limit)`, PY.memory, [String(mi * 1024 ** 2)]);
    await healthy(neighbour);
    // The disk is a tmpfs charged to the memory cgroup: whichever cap comes first must hold.
    const disk = await run({ containers: [{ name: 'main', command: ['sleep', '600'], resources: { cpu: '500m', memory: `${2 * mi}Mi` } }] });
    await attempt(disk, 'exhaustion', 'fill the disk (2x its size)', PY.disk);
    await healthy(neighbour);
    expect(escapes('exhaustion')).toEqual([]);
  }, 300_000);

  it('the platform is healthy after every attempt: a fresh sandbox runs a command', async () => {
    await healthy(neighbour);
    expect(attempts.length).toBeGreaterThan(0);
    expect(attempts.filter((a) => a.escaped)).toEqual([]);
  }, 60_000);
});
