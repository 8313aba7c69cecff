import fc from 'fast-check';
import {
  formatCpu,
  formatMemory,
  isQuantity,
  parseCpuMillis,
  parseMemoryBytes,
} from '../src/index';

describe('Kubernetes quantities', () => {
  it.each([
    ['500m', 500],
    ['1', 1000],
    ['1.5', 1500],
    ['1.1', 1100],
    ['0.0001', 1],
    ['2', 2000],
    ['1e3', 1_000_000],
    ['+2', 2000],
    ['.5', 500],
    ['100u', 1],
    [4, 4000],
    [0.25, 250],
  ] as const)('cpu %s = %d millicores', (q, millis) => {
    expect(parseCpuMillis(q)).toBe(millis);
  });

  it.each([
    ['2Gi', 2 * 1024 ** 3],
    ['128974848', 128974848],
    ['129M', 129_000_000],
    ['123Mi', 123 * 1024 ** 2],
    ['1e3', 1000],
    ['1E3', 1000],
    ['1.5Gi', 1.5 * 1024 ** 3],
    ['1k', 1000],
    ['1Ki', 1024],
    ['0.5', 1],
    ['1Ti', 1024 ** 4],
  ] as const)('memory %s = %d bytes', (q, bytes) => {
    expect(parseMemoryBytes(q)).toBe(bytes);
  });

  it.each([
    '',
    'lots',
    '1.2.3',
    '1GB',
    '1gi',
    '--1',
    '1 Gi',
    ' 1',
    '1e',
    'e3',
    '0x10',
    'Infinity',
    'NaN',
    '1e99999',
    '99999999999999999999Ei',
  ])('refuses %j', (q) => {
    expect(parseCpuMillis(q)).toBeNull();
    expect(parseMemoryBytes(q)).toBeNull();
  });

  it('refuses non-finite numbers and non-quantities', () => {
    expect(parseCpuMillis(Number.POSITIVE_INFINITY)).toBeNull();
    expect(parseMemoryBytes(Number.NaN)).toBeNull();
    expect(isQuantity({})).toBe(false);
    expect(isQuantity('2Gi')).toBe(true);
  });

  it('keeps negative values visible to the validators (which refuse them)', () => {
    expect(parseCpuMillis('-1')).toBe(-1000);
  });

  it.each([
    [1500, '1500m'],
    [2000, '2'],
    [1, '1m'],
  ])('formats %d millicores as %s', (m, s) => expect(formatCpu(m)).toBe(s));

  it.each([
    [2 * 1024 ** 3, '2Gi'],
    [129_000_000, '129M'],
    [1000, '1k'],
    [1001, '1001'],
    [0, '0'],
  ])('formats %d bytes as %s', (b, s) => expect(formatMemory(b)).toBe(s));

  it('format then parse is the identity (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 40 }), (n) => {
        expect(parseCpuMillis(formatCpu(n))).toBe(n);
        expect(parseMemoryBytes(formatMemory(n))).toBe(n);
      }),
      { seed: 42, numRuns: 2000 },
    );
  });
});
