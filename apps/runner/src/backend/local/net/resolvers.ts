import { NEVER_REACHABLE, parseIpv4 } from './cidr';

/**
 * The sandbox's resolv.conf, from the host's: only upstream IPv4 nameservers a sandbox can reach
 * through its link (a loopback or link-local resolver, e.g. systemd-resolved's 127.0.0.53, is the
 * host itself and stays out of reach), plus the `search`/`options` lines.
 */
export function sandboxResolvConf(hostResolvConf: string, hostAddresses: Set<string>): { text: string; resolvers: string[] } {
  const resolvers: string[] = [];
  const kept: string[] = [];
  for (const raw of hostResolvConf.split('\n')) {
    const line = raw.trim();
    const [key, value] = line.split(/\s+/);
    if (key === 'nameserver' && value) {
      const n = parseIpv4(value);
      if (n === undefined || hostAddresses.has(value) || NEVER_REACHABLE.some((b) => b.first <= n && n <= b.last)) continue;
      if (!resolvers.includes(value)) resolvers.push(value);
    } else if (key === 'search' || key === 'domain' || key === 'options') {
      kept.push(line);
    }
  }
  const text = [
    '# Written by the Paddock local backend: the host resolvers a sandbox can reach.',
    ...resolvers.map((r) => `nameserver ${r}`),
    ...kept,
    '',
  ].join('\n');
  return { text, resolvers };
}
