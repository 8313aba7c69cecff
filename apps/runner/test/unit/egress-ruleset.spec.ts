import { parseIpv4Cidr } from '../../src/backend/local/net/cidr';
import { baseTableScript, checkEgressGrant, sandboxChainScript, tableOwner, type RunnerNetNames, type SandboxLink } from '../../src/backend/local/net/nft-ruleset';
import { sandboxResolvConf } from '../../src/backend/local/net/resolvers';

function block(text: string): NonNullable<ReturnType<typeof parseIpv4Cidr>> {
  const b = parseIpv4Cidr(text);
  if (!b) throw new Error(`bad test block ${text}`);
  return b;
}
const names: RunnerNetNames = { table: 'paddock_abcde', vethPrefix: 'pdkabcde', linkBlock: block('198.18.8.0/21') };
const link: SandboxLink = { index: 3, veth: 'pdkabcde003', netns: 'pdkabcde-003', chain: 'sb003', hostAddr: '198.18.8.6', sandboxAddr: '198.18.8.7' };

describe('egress ruleset (pure)', () => {
  it('parses IPv4 CIDR text to its network and refuses anything else', () => {
    expect(parseIpv4Cidr('10.77.0.9/24')).toEqual({ text: '10.77.0.0/24', first: 0x0a4d0000, last: 0x0a4d00ff, prefix: 24 });
    expect(parseIpv4Cidr('1.2.3.4')).toMatchObject({ text: '1.2.3.4/32' });
    for (const bad of ['10.0.0.0/33', '256.0.0.0/8', '10.0.0/8', 'x', '10.0.0.0/8/1']) expect(parseIpv4Cidr(bad)).toBeUndefined();
  });

  it('a grant inside a private range names it; a wider grant does not open the private ranges it contains', () => {
    const inside = sandboxChainScript(names, link, { kind: 'cidrs', rules: [{ cidr: '10.77.0.0/24', except: ['10.77.0.3/32'], ports: [{ protocol: 'TCP', port: 8080 }, { protocol: 'UDP', port: 53, endPort: 54 }] }] }, []);
    expect(inside).toContain('add rule inet paddock_abcde sb003 ip daddr 10.77.0.0/24 ip daddr != { 10.77.0.3/32 } meta l4proto tcp th dport { 8080 } accept');
    expect(inside).toContain('ip daddr 10.77.0.0/24 ip daddr != { 10.77.0.3/32 } meta l4proto udp th dport { 53-54 } accept');
    const world = sandboxChainScript(names, link, { kind: 'cidrs', rules: [{ cidr: '0.0.0.0/0', except: [], ports: [] }] }, []);
    expect(world).toContain('ip daddr 0.0.0.0/0 ip daddr != { 10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16, 100.64.0.0/10 } accept');
    // Both end with a drop, after a forged-source drop and the never-reachable ranges.
    for (const script of [inside, world]) {
      const rules = script.split('\n').filter((l) => l.startsWith('add rule'));
      expect(rules[0]).toMatch(/ip saddr != 198\.18\.8\.7 drop$/);
      expect(rules[1]).toContain('169.254.0.0/16');
      expect(rules.at(-1)).toMatch(/ drop$/);
    }
    expect(inside).toMatch(/add element inet paddock_abcde sandbox_chains \{ "pdkabcde003" : jump sb003 \}/);
  });

  it('unrestricted egress allows DNS to the resolvers, then drops private ranges, then accepts', () => {
    const rules = sandboxChainScript(names, link, { kind: 'unrestricted' }, ['10.255.255.53'])
      .split('\n')
      .filter((l) => l.startsWith('add rule'))
      .map((l) => l.replace('add rule inet paddock_abcde sb003 ', ''));
    expect(rules.slice(2)).toEqual([
      'ip daddr { 10.255.255.53 } meta l4proto { tcp, udp } th dport 53 accept',
      'ip daddr { 10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16, 100.64.0.0/10 } drop',
      'accept',
    ]);
  });

  it('refuses by field what it cannot enforce', () => {
    expect(() => checkEgressGrant({ kind: 'cidrs', rules: [{ cidr: '2001:db8::/32', except: [], ports: [] }] })).toThrow(/egress\.rules\[0\]\.cidr\.cidr "2001:db8::\/32": the local backend routes IPv4 only/);
    expect(() => checkEgressGrant({ kind: 'cidrs', rules: [{ cidr: '10.0.0.0/8', except: ['nope'], ports: [] }] })).toThrow(/egress\.rules\[0\]\.cidr\.except\[0\] "nope" is not an IPv4 CIDR block/);
    expect(() => checkEgressGrant({ kind: 'cidrs', rules: [{ cidr: '127.0.0.1/32', except: [], ports: [] }] })).toThrow(/lies in a range no sandbox may reach/);
  });

  it('the base table drops input from its veths and records its owner', () => {
    const script = baseTableScript(names, '/run/paddock/local');
    expect(script).toContain('add table inet paddock_abcde { comment "/run/paddock/local" ; }');
    expect(script).toContain('add rule inet paddock_abcde input iifname "pdkabcde*" drop');
    expect(script).toContain('add rule inet paddock_abcde forward oifname "pdk*" drop');
    expect(tableOwner('table inet paddock_abcde {\n\tcomment "/run/paddock/local"\n}')).toBe('/run/paddock/local');
    expect(baseTableScript(names, '/odd "dir"')).toContain('add table inet paddock_abcde\n');
  });

  it("derives the sandbox's resolv.conf from the host's upstream resolvers only", () => {
    const r = sandboxResolvConf('nameserver 127.0.0.53\nnameserver 192.0.2.2\nnameserver 10.255.255.53\nnameserver fd00::1\nsearch corp.example\noptions ndots:2\n', new Set(['192.0.2.2']));
    expect(r.resolvers).toEqual(['10.255.255.53']);
    expect(r.text).toContain('nameserver 10.255.255.53\nsearch corp.example\noptions ndots:2\n');
    expect(r.text).not.toMatch(/127\.0\.0\.53|192\.0\.2\.2|fd00/);
  });
});
