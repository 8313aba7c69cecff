import { UsageError } from './errors';
import { loadYaml } from './lazy';

export const OUTPUT_FORMATS = ['table', 'wide', 'json', 'yaml', 'name'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

export function parseOutputFormat(v: string | undefined): OutputFormat {
  const f = v ?? 'table';
  if (!(OUTPUT_FORMATS as readonly string[]).includes(f)) {
    throw new UsageError(`invalid output format "${f}": use one of ${OUTPUT_FORMATS.join(', ')}`);
  }
  return f as OutputFormat;
}

/** A borderless table with UPPERCASE headers and a 3-space gap (kubectl style). */
export function renderTable(headers: string[], rows: string[][], noHeaders = false): string {
  const all = noHeaders ? rows : [headers.map((h) => h.toUpperCase()), ...rows];
  const widths = headers.map((_, i) => Math.max(...all.map((r) => (r[i] ?? '').length)));
  return all
    .map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i] ?? 0))).join('   ').trimEnd())
    .join('\n');
}

export function toJson(value: unknown): string {
  return JSON.stringify(value, null, 2);
}

export function toYaml(value: unknown): string {
  return loadYaml().stringify(value, { lineWidth: 0 });
}

/** Human age like kubectl: 45s, 12m, 3h, 5d. */
export function age(iso: string | null | undefined, now = Date.now()): string {
  if (!iso) return '-';
  const s = Math.max(0, Math.floor((now - new Date(iso).getTime()) / 1000));
  if (s < 120) return `${s}s`;
  if (s < 7200) return `${Math.floor(s / 60)}m`;
  if (s < 172800) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86400)}d`;
}

/** Strips an enum prefix for table display: RUNNER_INSTALL_STATUS_READY → READY. */
export function shortEnum(v: string | undefined | null, prefix: string): string {
  if (!v) return '-';
  return v.startsWith(prefix) ? v.slice(prefix.length) : v;
}
