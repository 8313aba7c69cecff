import type { ManagedRunner } from '@paddock/contracts';

/**
 * The describe lines of a runner's warm pools: each pool's size beside what the runner last
 * reported ready (and why it cannot fill, when it said), and what its template asks for.
 */
export function warmPoolLines(r: ManagedRunner): string[] {
  const pools = r.spec.warmPools ?? [];
  if (pools.length === 0) return ['Warm pools:      none'];
  const status = new Map((r.warmPoolStatus ?? []).map((s) => [s.name, s]));
  const lines = ['Warm pools:'];
  for (const p of pools) {
    const s = status.get(p.name);
    const ready = s ? `${s.ready}/${p.size} ready` : `${p.size} wanted, not reported yet`;
    lines.push(`  ${p.name}: ${ready}${s?.error ? ` (${s.error})` : ''}  template ${JSON.stringify(p.template)}`);
  }
  return lines;
}
