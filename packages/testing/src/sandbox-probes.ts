import { connect, createServer, type AddressInfo, type Server } from 'node:net';
import { networkInterfaces } from 'node:os';

/**
 * Python (the base image's python3) that connects to every `host:port` given as an argument, all
 * at once, and prints one JSON object of verdicts: `open`, or `closed` for a refused, dropped
 * (timed out) or unroutable connection. argv[1] is the per-connection timeout in seconds.
 */
export const TCP_PROBE_PY = `
import socket, sys, threading, json
out = {}
def probe(t):
  h, p = t.rsplit(':', 1)
  s = socket.socket(socket.AF_INET6 if ':' in h else socket.AF_INET)
  s.settimeout(float(sys.argv[1]))
  try:
    s.connect((h.strip('[]'), int(p)))
    out[t] = 'open'
  except Exception:
    out[t] = 'closed'
  finally:
    s.close()
ts = [threading.Thread(target=probe, args=(t,)) for t in sys.argv[2:]]
for th in ts: th.start()
for th in ts: th.join()
print(json.dumps(out))
`;

export type Reach = 'open' | 'closed';

/** The argv that runs the probe inside a sandbox. */
export function tcpProbeArgv(targets: string[], timeoutSeconds = 1.5): string[] {
  return ['python3', '-c', TCP_PROBE_PY, String(timeoutSeconds), ...targets];
}

/** The same probe from the host: the control that shows a target is really listening. */
export function probeFromHost(target: string, timeoutMs = 1500): Promise<Reach> {
  const i = target.lastIndexOf(':');
  const host = target.slice(0, i).replace(/^\[|\]$/g, '');
  const port = Number(target.slice(i + 1));
  return new Promise((resolve) => {
    const s = connect({ host, port, timeout: timeoutMs });
    s.on('connect', () => {
      s.destroy();
      resolve('open');
    });
    s.on('timeout', () => {
      s.destroy();
      resolve('closed');
    });
    s.on('error', () => resolve('closed'));
  });
}

/** A TCP listener of the test on every host address (0.0.0.0): 127.0.0.1, the host's own addresses, the veth gateways. */
export async function hostListener(): Promise<{ port: number; server: Server }> {
  const server = createServer((c) => {
    c.on('error', () => undefined);
    c.end('hello\n');
  });
  await new Promise<void>((r) => server.listen(0, '0.0.0.0', r));
  return { port: (server.address() as AddressInfo).port, server };
}

/** The host's first non-loopback IPv4 address (where a service bound to 0.0.0.0 also answers). */
export function hostAddress(): string {
  for (const [name, addrs] of Object.entries(networkInterfaces())) {
    if (name === 'lo' || name.startsWith('pdk') || name.startsWith('ptx')) continue;
    const a = (addrs ?? []).find((x) => x.family === 'IPv4' && !x.internal);
    if (a) return a.address;
  }
  throw new Error('this host has no non-loopback IPv4 address');
}

