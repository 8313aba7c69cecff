import { parseCidr } from '../src/index';
import { intervalsCover, subtractIntervals } from '../src/cidr';

describe('CIDR parsing', () => {
  it('parses canonical IPv4 and IPv6 prefixes', () => {
    expect(parseCidr('10.0.0.0/8')).toMatchObject({
      version: 4,
      prefix: 8,
      isCanonical: true,
      canonical: '10.0.0.0/8',
    });
    expect(parseCidr('2001:db8::/32')).toMatchObject({ version: 6, isCanonical: true });
    expect(parseCidr('::/0')).toMatchObject({ version: 6, prefix: 0, isCanonical: true });
  });

  it('reports host bits and non-canonical spellings with the canonical prefix', () => {
    expect(parseCidr('10.0.0.1/8')).toMatchObject({ isCanonical: false, canonical: '10.0.0.0/8' });
    expect(parseCidr('2001:DB8:0:0::/32')).toMatchObject({
      isCanonical: false,
      canonical: '2001:db8::/32',
    });
    expect(parseCidr('2001:db8:0:1:0:0:0:0/64')?.canonical).toBe('2001:db8:0:1::/64');
  });

  it('flags IPv4-mapped IPv6 prefixes', () => {
    expect(parseCidr('::ffff:10.0.0.0/104')?.ipv4Mapped).toBe(true);
    expect(parseCidr('2001:db8::/32')?.ipv4Mapped).toBe(false);
  });

  it.each([
    '10.0.0.0',
    '10.0.0.0/33',
    '256.0.0.0/8',
    '010.0.0.0/8',
    '10.0.0/8',
    '1::2::3/64',
    'fe80::1%eth0/64',
    '10.0.0.0/08',
    'x/1',
    '::/129',
  ])('refuses %j', (t) => {
    expect(parseCidr(t)).toBeNull();
  });

  it('computes interval cover with exceptions', () => {
    const all = parseCidr('0.0.0.0/0');
    const meta = parseCidr('169.254.169.254/32');
    const link = parseCidr('169.254.0.0/16');
    if (!all || !meta || !link) throw new Error('parse');
    const have = subtractIntervals([{ lo: all.lo, hi: all.hi }], [{ lo: meta.lo, hi: meta.hi }]);
    expect(intervalsCover(have, [{ lo: link.lo, hi: link.hi }])).toBe(false);
    expect(
      intervalsCover(
        have,
        subtractIntervals([{ lo: link.lo, hi: link.hi }], [{ lo: meta.lo, hi: meta.hi }]),
      ),
    ).toBe(true);
  });
});
