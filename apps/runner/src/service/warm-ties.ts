import { closeSync, existsSync, openSync, readFileSync, renameSync, writeFileSync, writeSync } from 'node:fs';
import { z } from 'zod';
import { parseTieJson, type WarmTie, type WarmTieStore } from '../backend/warm-tie';

export type { WarmTie } from '../backend/warm-tie';

/** A tie as a journal line holds it (`WarmTie`). */
const WarmTieSchema = z.object({
  v: z.literal(1),
  warmId: z.string().min(1),
  /** The warm sandbox's own deadline when taken (the backend's, which moves while it is paused). */
  warmDeadline: z.string(),
  sandboxId: z.string().min(1),
  env: z.record(z.string(), z.string()),
  labels: z.record(z.string(), z.string()),
  takenAt: z.string(),
  deadline: z.string(),
}) satisfies z.ZodType<WarmTie>;

const JournalLineSchema = z.discriminatedUnion('op', [WarmTieSchema.extend({ op: z.literal('take') }), z.object({ op: z.literal('end'), warmId: z.string() })]);

/** Journal lines beyond the live ties that trigger a rewrite (the journal stays near the live set). */
const SLACK_LINES = 1024;

/** The ties a journal holds (a torn or unreadable line, from a runner killed mid-write, is skipped). */
export function readTies(path: string): Map<string, WarmTie> {
  const live = new Map<string, WarmTie>();
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return live;
  }
  for (const line of text.split('\n')) {
    const entry = line ? parseTieJson(JournalLineSchema, line) : undefined;
    if (!entry) continue;
    if (entry.op === 'end') {
      live.delete(entry.warmId);
    } else {
      const { op: _op, ...tie } = entry;
      live.set(tie.warmId, tie);
    }
  }
  return live;
}

/**
 * Ties kept in an append-only journal in the runner's state dir: a take appends its tie, an end
 * appends the warm id. One `write` of one line per change: the line is in the file whole or not at
 * all when the runner is killed, and it costs a few microseconds, where creating a file per take
 * cost ~150 µs of CPU (a burst's creates need that CPU). The journal is rewritten to the live ties
 * (to a temporary file renamed into place) when it has grown well past them and at every recovery.
 * Mode 0600: the environment holds the create's delivered secret values, as the sandbox's own
 * launch plan does (`secretEnvNames` is not needed apart: the whole file is as private as they are).
 */
export class WarmTieJournal implements WarmTieStore {
  private fd: number | undefined;
  private live = new Map<string, WarmTie>();
  private lines = 0;

  constructor(private readonly path: string) {}

  put(tie: WarmTie, _secretEnvNames?: readonly string[]): void {
    this.live.set(tie.warmId, tie);
    this.append({ op: 'take', ...tie });
  }

  remove(warmId: string): void {
    if (!this.live.delete(warmId)) return;
    this.append({ op: 'end', warmId });
  }

  /** Every tie the journal holds (at startup, before any `put`); the journal is rewritten to them. */
  loadAll(): WarmTie[] {
    this.live = readTies(this.path);
    if (existsSync(this.path)) this.rewrite();
    return [...this.live.values()];
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }

  private append(line: object): void {
    this.fd ??= openSync(this.path, 'a', 0o600);
    writeSync(this.fd, `${JSON.stringify(line)}\n`);
    if (++this.lines > this.live.size + SLACK_LINES) this.rewrite();
  }

  private rewrite(): void {
    const tmp = `${this.path}.${process.pid}.tmp`;
    writeFileSync(tmp, [...this.live.values()].map((t) => `${JSON.stringify({ op: 'take', ...t })}\n`).join(''), { mode: 0o600 });
    renameSync(tmp, this.path);
    // Appends go to the new file from here on.
    this.close();
    this.lines = this.live.size;
  }
}
