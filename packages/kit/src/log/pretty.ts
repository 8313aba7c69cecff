/** What a terminal reader sees instead of a JSON line: time, level, service, message, fields. */
const COLOURS: Record<string, string> = { trace: '90', debug: '90', info: '32', warn: '33', error: '31', fatal: '35' };
const OWN_KEYS = new Set(['time', 'level', 'service', 'msg']);

const text = (v: unknown, fallback: string): string => (typeof v === 'string' ? v : v === undefined ? fallback : JSON.stringify(v));

function fieldText(v: unknown): string {
  if (typeof v === 'string') return /[\s"=]/.test(v) ? JSON.stringify(v) : v;
  return JSON.stringify(v);
}

/** One JSON log line as one coloured line of text (a line that is not JSON passes through). */
export function prettyLine(jsonLine: string): string {
  let rec: Record<string, unknown>;
  try {
    rec = JSON.parse(jsonLine) as Record<string, unknown>;
  } catch {
    return jsonLine;
  }
  const level = text(rec.level, 'info');
  const time = typeof rec.time === 'string' ? rec.time.slice(11, 23) : '';
  const fields = Object.entries(rec)
    .filter(([k]) => !OWN_KEYS.has(k))
    .map(([k, v]) => `${k}=${fieldText(v)}`)
    .join(' ');
  const head = `\x1b[${COLOURS[level] ?? '0'}m${level.toUpperCase().padEnd(5)}\x1b[0m`;
  return `${time} ${head} \x1b[36m${text(rec.service, '')}\x1b[0m ${text(rec.msg, '')}${fields ? ` \x1b[90m${fields}\x1b[0m` : ''}\n`;
}
