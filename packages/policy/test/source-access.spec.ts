import { FULL_CAPABILITIES, type Policy } from '@paddock/contracts';
import { checkSourceAccess, explainPlacement, validatePolicy } from '../src';
import { DEFAULT_POLICY } from '../src/defaults';

const allow = (cidrs: string[] | undefined): Policy => ({ controlPlaneAccess: { sourceIpAllowlist: cidrs === undefined ? {} : { cidrs } } });

describe('controlPlaneAccess.sourceIpAllowlist: who may use a runner', () => {
  it('restricts nothing without the object; an empty list denies every public source', () => {
    expect(checkSourceAccess({}, '203.0.113.9')).toBeNull();
    expect(checkSourceAccess(null, '203.0.113.9')).toBeNull();
    expect(checkSourceAccess(DEFAULT_POLICY, '198.51.100.1')).toBeNull();
    for (const empty of [allow([]), allow(undefined)]) {
      expect(checkSourceAccess(empty, '203.0.113.9')).toMatchObject({
        field: 'controlPlaneAccess.sourceIpAllowlist',
        rule: 'source_ip_not_allowed',
        description: "the runner policy's controlPlaneAccess.sourceIpAllowlist is empty: no public source (here 203.0.113.9) may use it",
      });
    }
  });

  it('admits public sources inside a listed prefix (IPv4, IPv6, IPv4 on a dual-stack socket) and names the rule otherwise', () => {
    const p = allow(['203.0.113.0/24', '2001:db8::/32']);
    for (const ok of ['203.0.113.0', '203.0.113.255', '::ffff:203.0.113.7', '2001:db8::1', '2001:db8:ffff::']) expect(checkSourceAccess(p, ok), ok).toBeNull();
    for (const denied of ['203.0.114.0', '198.51.100.7', '::ffff:198.51.100.7', '2001:db9::1']) {
      const v = checkSourceAccess(p, denied);
      expect(v?.rule, denied).toBe('source_ip_not_allowed');
      expect(v?.description).toBe(`source address ${denied} is not in the runner policy's controlPlaneAccess.sourceIpAllowlist (2 prefixes)`);
      expect(v?.limit).toEqual(['203.0.113.0/24', '2001:db8::/32']);
    }
  });

  it('never restricts non-public sources (loopback, private, shared, link-local, unique-local)', () => {
    const p = allow([]);
    for (const ip of ['127.0.0.1', '::ffff:127.0.0.1', '10.1.2.3', '172.16.0.1', '172.31.255.255', '192.168.1.1', '100.64.0.1', '169.254.1.1', '::1', 'fd00::1', 'fe80::1']) {
      expect(checkSourceAccess(p, ip), ip).toBeNull();
    }
    for (const ip of ['172.32.0.1', '100.128.0.1', '8.8.8.8', '2606:4700::1']) expect(checkSourceAccess(p, ip)?.rule, ip).toBe('source_ip_not_allowed');
  });

  it('refuses an address it cannot read (fail closed), quoting at most 64 characters of it', () => {
    const v = checkSourceAccess(allow(['0.0.0.0/0']), 'x'.repeat(500));
    expect(v?.rule).toBe('source_ip_not_allowed');
    expect(String(v?.requested)).toHaveLength(64);
    // 0.0.0.0/0 admits every IPv4 source.
    expect(checkSourceAccess(allow(['0.0.0.0/0']), '198.51.100.7')).toBeNull();
  });

  it('explain reports the source beside the spec violations, only when a caller address is given', () => {
    const policy: Policy = { ...allow(['203.0.113.0/24']), constraints: { resources: { maxCpu: '1' } } };
    expect(validatePolicy(policy).ok).toBe(true);
    const spec = { containers: [{ name: 'main', resources: { cpu: '2' } }] };
    const runners = [
      { runnerId: 'locked', policy, capabilities: FULL_CAPABILITIES },
      { runnerId: 'open', policy: {}, capabilities: FULL_CAPABILITIES },
    ];
    const outside = explainPlacement(spec, runners, { sourceIp: '198.51.100.7' });
    expect(outside.map((v) => [v.runnerId, v.admitted, v.violations.map((x) => x.rule)])).toEqual([
      ['locked', false, ['source_ip_not_allowed', 'max_cpu']],
      ['open', true, []],
    ]);
    const inside = explainPlacement({ containers: [{ name: 'main' }] }, runners, { sourceIp: '203.0.113.7' });
    expect(inside.every((v) => v.admitted)).toBe(true);
    // Without a caller address (the runner's own resolution), the allowlist plays no part.
    expect(explainPlacement({ containers: [{ name: 'main' }] }, runners).every((v) => v.admitted)).toBe(true);
  });
});
