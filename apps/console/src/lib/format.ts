/** Small display helpers shared by the pages. */

/** `RUNNER_INSTALL_STATUS_READY` → `READY`, `STATE_RUNNING` → `RUNNING`. */
export function enumLabel(value: string | null | undefined, prefix: string): string {
  if (!value) return '—';
  return value.startsWith(prefix) ? value.slice(prefix.length) : value;
}

export function timeAgo(iso: string | null | undefined, now = Date.now()): string {
  if (!iso) return '—';
  const s = Math.round((now - new Date(iso).getTime()) / 1000);
  if (Number.isNaN(s)) return iso;
  if (s < 5) return 'just now';
  if (s < 60) return `${s}s ago`;
  if (s < 3600) return `${Math.floor(s / 60)}m ago`;
  if (s < 86_400) return `${Math.floor(s / 3600)}h ago`;
  return `${Math.floor(s / 86_400)}d ago`;
}

export const shortId = (id: string): string => id.slice(0, 8);

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

export const showValue = (v: unknown): string => (v === undefined ? '(unset)' : JSON.stringify(v));

export const splitList = (s: string): string[] =>
  s
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);
