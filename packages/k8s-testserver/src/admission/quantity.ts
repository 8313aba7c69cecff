const SUFFIX: Record<string, number> = {
  n: 1e-9, u: 1e-6, m: 1e-3, '': 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18,
  Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60,
};

/** A resource.Quantity string (`500m`, `1Gi`, `2`) as a number; NaN when malformed. */
export function parseQuantity(q: string | number | undefined): number {
  if (q === undefined) return 0;
  if (typeof q === 'number') return q;
  const m = /^([+-]?[0-9.]+(?:[eE][+-]?\d+)?)(n|u|m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?$/.exec(q.trim());
  if (!m) return Number.NaN;
  return Number(m[1]) * (SUFFIX[m[2] ?? ''] ?? 1);
}

/** Canonical-looking form for messages: CPU in millicores when fractional, bytes as integers. */
export function formatQuantity(resource: string, v: number): string {
  if (/cpu/.test(resource) && !Number.isInteger(v)) return `${Math.round(v * 1000)}m`;
  if (/memory|storage/.test(resource)) {
    for (const [suffix, f] of [['Gi', 2 ** 30], ['Mi', 2 ** 20], ['Ki', 2 ** 10]] as const) if (v >= f && v % f === 0) return `${v / f}${suffix}`;
  }
  return String(v);
}
