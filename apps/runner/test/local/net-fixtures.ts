import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { tcpProbeArgv, type Reach } from '@paddock/testing';
export { hostAddress, hostListener, probeFromHost } from '@paddock/testing';
import type { TestBackend } from './helpers';

export type { Reach };

/** What a sandbox reaches of `targets` (a refusal, a drop or no route all count as closed). */
export async function probeFromSandbox(t: TestBackend, sandboxId: string, targets: string[], timeoutSeconds = 1.5): Promise<Record<string, Reach>> {
  const r = await t.backend.exec(sandboxId, { argv: tcpProbeArgv(targets, timeoutSeconds), timeoutMs: (timeoutSeconds + 20) * 1000 });
  if (r.exitCode !== 0) throw new Error(`probe failed in ${sandboxId}: ${r.stderr.toString()}`);
  return JSON.parse(r.stdout.toString()) as Record<string, Reach>;
}

/** Python for a test host: TCP listeners that greet, and optionally a DNS server that answers every A query. */
const TEST_HOST_PY = `
import socket, sys, threading, struct, json
conf = json.loads(sys.argv[1])
def tcp(port):
  s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
  s.bind(('0.0.0.0', port)); s.listen(64)
  def loop():
    while True:
      c, _ = s.accept(); c.sendall(b'hello\\n'); c.close()
  threading.Thread(target=loop, daemon=True).start()
def dns(answer):
  u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u.bind(('0.0.0.0', 53))
  ip = socket.inet_aton(answer)
  def loop():
    while True:
      q, peer = u.recvfrom(512)
      qid = q[:2]; end = 12
      while q[end] != 0: end += q[end] + 1
      question = q[12:end + 5]
      qtype = struct.unpack('>H', q[end + 1:end + 3])[0]
      ans = (b'\\xc0\\x0c' + struct.pack('>HHIH', 1, 1, 60, 4) + ip) if qtype == 1 else b''
      u.sendto(qid + struct.pack('>HHHHH', 0x8180, 1, 1 if ans else 0, 0, 0) + question + ans, peer)
  threading.Thread(target=loop, daemon=True).start()
for p in conf['ports']: tcp(p)
if conf.get('dnsAnswer'): dns(conf['dnsAnswer'])
print('ready', flush=True)
sys.stdin.read()
`;

/**
 * A host of the test's own: a network namespace behind a veth pair, with `hostSide` (a.b.c.d/n)
 * on the host end and `addresses` on its own end, serving TCP `ports` (and DNS when asked).
 * Named `ptx…` so nothing of it is mistaken for a sandbox link.
 */
export class TestHost {
  readonly netns = `ptx${randomBytes(3).toString('hex')}`;
  private readonly veth = `${this.netns}h`;
  private proc?: ChildProcess;

  constructor(
    private readonly hostSide: string,
    readonly addresses: string[],
    private readonly ports: number[],
    private readonly dnsAnswer?: string,
  ) {}

  async start(): Promise<this> {
    const prefix = this.hostSide.split('/')[1];
    execFileSync('ip', ['-batch', '-'], {
      input: [`netns add ${this.netns}`, `link add ${this.veth} type veth peer name eth0 netns ${this.netns}`, `addr add ${this.hostSide} dev ${this.veth}`, `link set ${this.veth} up`, ''].join('\n'),
    });
    execFileSync('ip', ['-n', this.netns, '-batch', '-'], {
      input: [...this.addresses.map((a) => `addr add ${a}/${prefix} dev eth0`), 'link set eth0 up', 'link set lo up', ''].join('\n'),
    });
    const proc = spawn('ip', ['netns', 'exec', this.netns, '/usr/bin/python3', '-c', TEST_HOST_PY, JSON.stringify({ ports: this.ports, dnsAnswer: this.dnsAnswer })], {
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    this.proc = proc;
    await new Promise<void>((resolve, reject) => {
      proc.stdout?.once('data', () => resolve());
      proc.once('exit', (code) => reject(new Error(`test host ${this.netns} exited (${code})`)));
    });
    return this;
  }

  async stop(): Promise<void> {
    const proc = this.proc;
    if (proc && proc.exitCode === null) {
      const gone = new Promise((r) => proc.once('exit', r));
      proc.kill('SIGKILL');
      await gone;
    }
    try {
      execFileSync('ip', ['-force', '-batch', '-'], { input: `link del ${this.veth}\nnetns del ${this.netns}\n`, stdio: ['pipe', 'ignore', 'ignore'] });
    } catch {
      // the veth went with the namespace; what matters is checked below
    }
    if (existsSync(`/run/netns/${this.netns}`)) throw new Error(`test host ${this.netns} was not removed`);
  }
}

/** Everything of a runner's network left on the machine: namespaces, veths, nftables table. */
export function networkLeftovers(t: TestBackend): { netns: string[]; veths: string[]; table: boolean } {
  const prefix = t.backend.networks().names.vethPrefix;
  const netns = existsSync('/run/netns') ? readdirSync('/run/netns').filter((n) => n.startsWith(prefix)) : [];
  const veths = readdirSync('/sys/class/net').filter((n) => n.startsWith(prefix));
  let table = true;
  try {
    execFileSync('nft', ['list', 'table', 'inet', t.backend.networks().names.table], { stdio: 'ignore' });
  } catch {
    table = false;
  }
  return { netns, veths, table };
}
