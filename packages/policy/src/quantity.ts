/**
 * Kubernetes quantities (`500m`, `1.5`, `2Gi`, `1e3`, `128974848`, `129M`), parsed exactly.
 *
 * Grammar (k8s.io/apimachinery resource.Quantity):
 *   quantity ::= signedNumber suffix
 *   suffix   ::= binarySI (Ki Mi Gi Ti Pi Ei) | decimalSI (n u m "" k M G T P E) | e/E signedInteger
 * Values are computed with BigInt so `1.1` CPU is exactly 1100 millicores (floats would give 1101
 * after rounding up). Like Kubernetes, a value finer than the unit rounds UP (`0.0001` CPU = 1m).
 * Results beyond Number.MAX_SAFE_INTEGER are refused rather than silently imprecise.
 */

const QUANTITY_RE =
  /^([+-]?)(\d+(?:\.\d*)?|\.\d+)(?:(Ki|Mi|Gi|Ti|Pi|Ei)|([numkMGTPE])|[eE]([+-]?\d{1,3}))?$/;

const BINARY_POW: Record<string, number> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };
const DECIMAL_EXP: Record<string, number> = {
  n: -9,
  u: -6,
  m: -3,
  k: 3,
  M: 6,
  G: 9,
  T: 12,
  P: 15,
  E: 18,
};
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
/** Exponents beyond this cannot produce a safe integer from a quantity of sane length. */
const MAX_EXPONENT = 40;

/** Parses to an integer count of `10^-scale` units (scale 3 = millis, 0 = units), rounding up. */
function parseScaled(input: string | number, scale: number): number | null {
  let text: string;
  if (typeof input === 'number') {
    if (!Number.isFinite(input)) return null;
    text = String(input);
    // String(1e21) is "1e+21": the grammar below accepts that exponent form.
  } else if (typeof input === 'string') {
    text = input;
  } else {
    return null;
  }
  if (text.length === 0 || text.length > 64) return null;
  const m = QUANTITY_RE.exec(text);
  if (!m) return null;
  const sign = m[1] === '-' ? -1n : 1n;
  const num = m[2] as string;
  const dot = num.indexOf('.');
  const intPart = dot < 0 ? num : num.slice(0, dot);
  const fracPart = dot < 0 ? '' : num.slice(dot + 1);
  const digits = BigInt((intPart + fracPart).replace(/^0+(?=\d)/, '') || '0');
  let exp = scale - fracPart.length;
  let binary = 0;
  if (m[3]) binary = BINARY_POW[m[3]] as number;
  else if (m[4]) exp += DECIMAL_EXP[m[4]] as number;
  else if (m[5]) exp += Number(m[5]);
  if (exp > MAX_EXPONENT) return digits === 0n ? 0 : null;
  let value = digits << BigInt(binary);
  if (exp >= 0) {
    value *= 10n ** BigInt(exp);
  } else {
    if (exp < -MAX_EXPONENT) return digits === 0n ? 0 : sign > 0n ? 1 : 0;
    const div = 10n ** BigInt(-exp);
    // Round up (towards +infinity for positives) like resource.Quantity's ScaledValue.
    value = (value + div - 1n) / div;
  }
  if (value > MAX_SAFE) return null;
  const n = Number(value);
  return sign < 0n ? -n : n;
}

// Quantities repeat constantly (every container of every request says "500m" or "1Gi"), so parses
// are memoized. The cache is bounded: cleared whole when full, which keeps it O(1) and safe under
// adversarial input.
const CACHE_LIMIT = 4096;
const cpuCache = new Map<string, number | null>();
const memCache = new Map<string, number | null>();

function cached(
  cache: Map<string, number | null>,
  input: string | number,
  scale: number,
): number | null {
  if (typeof input !== 'string') return parseScaled(input, scale);
  const hit = cache.get(input);
  if (hit !== undefined) return hit;
  const v = parseScaled(input, scale);
  if (cache.size >= CACHE_LIMIT) cache.clear();
  cache.set(input, v);
  return v;
}

/** `"500m"` → 500, `"1.5"` → 1500, `2` → 2000; `null` for garbage or out-of-range values. */
export function parseCpuMillis(q: string | number): number | null {
  return cached(cpuCache, q, 3);
}

/** `"2Gi"` → 2147483648, `"129M"` → 129000000, `"1e3"` → 1000; `null` for garbage. */
export function parseMemoryBytes(q: string | number): number | null {
  return cached(memCache, q, 0);
}

/** Whether a value is a well-formed quantity at all (any unit). */
export function isQuantity(q: unknown): q is string | number {
  if (typeof q === 'number') return Number.isFinite(q);
  return typeof q === 'string' && q.length <= 64 && QUANTITY_RE.test(q);
}

/** 1500 → `"1500m"`, 2000 → `"2"`: the shortest exact Kubernetes spelling. */
export function formatCpu(millis: number): string {
  return millis % 1000 === 0 ? String(millis / 1000) : `${millis}m`;
}

const BINARY_SUFFIXES: readonly [string, number][] = [
  ['Ei', 2 ** 60],
  ['Pi', 2 ** 50],
  ['Ti', 2 ** 40],
  ['Gi', 2 ** 30],
  ['Mi', 2 ** 20],
  ['Ki', 2 ** 10],
];
const DECIMAL_SUFFIXES: readonly [string, number][] = [
  ['E', 1e18],
  ['P', 1e15],
  ['T', 1e12],
  ['G', 1e9],
  ['M', 1e6],
  ['k', 1e3],
];

/** 2147483648 → `"2Gi"`, 129000000 → `"129M"`, 1000 → `"1k"`, 1001 → `"1001"`. */
const formatMemoryCache = new Map<number, string>();

export function formatMemory(bytes: number): string {
  const hit = formatMemoryCache.get(bytes);
  if (hit !== undefined) return hit;
  const s = formatMemoryUncached(bytes);
  if (formatMemoryCache.size >= 1024) formatMemoryCache.clear();
  formatMemoryCache.set(bytes, s);
  return s;
}

function formatMemoryUncached(bytes: number): string {
  if (bytes === 0) return '0';
  // Only a multiple of 1000 or 1024 has a suffix; most others are returned without the loops.
  if (bytes % 1000 !== 0 && bytes % 1024 !== 0) return String(bytes);
  for (const [s, f] of BINARY_SUFFIXES) if (bytes % f === 0) return `${bytes / f}${s}`;
  for (const [s, f] of DECIMAL_SUFFIXES) if (bytes % f === 0) return `${bytes / f}${s}`;
  return String(bytes);
}
