import { mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';

/**
 * A taken warm sandbox's tie to the create it serves: what a restarted runner needs to report it
 * under the create's id and keep serving it as the create asked (its environment, its labels, which
 * carry the create's persisted metadata, and its own deadline, shorter than the warm sandbox's).
 */
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
});
export type WarmTie = z.infer<typeof WarmTieSchema>;

/**
 * Ties kept as one file per warm sandbox in the runner's state dir. Each is written to a temporary
 * name and renamed into place, so a runner killed mid-write leaves either no tie or a whole one.
 * Mode 0600: the environment holds the create's delivered secret values, as the sandbox's own
 * launch plan does.
 */
export class WarmTieStore {
  constructor(private readonly dir: string) {}

  async put(tie: WarmTie): Promise<void> {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const final = this.path(tie.warmId);
    const tmp = `${final}.${process.pid}.tmp`;
    await writeFile(tmp, JSON.stringify(tie), { mode: 0o600 });
    await rename(tmp, final);
  }

  async remove(warmId: string): Promise<void> {
    await rm(this.path(warmId), { force: true });
  }

  /** Every readable tie; unreadable ones and leftover temporary files are removed. */
  loadAll(): WarmTie[] {
    let names: string[];
    try {
      names = readdirSync(this.dir);
    } catch {
      return [];
    }
    const out: WarmTie[] = [];
    for (const name of names) {
      const file = join(this.dir, name);
      const tie = name.endsWith('.json') ? parseTie(file) : undefined;
      if (tie && `${tie.warmId}.json` === name) out.push(tie);
      else rmSync(file, { force: true });
    }
    return out;
  }

  private path(warmId: string): string {
    return join(this.dir, `${warmId}.json`);
  }
}

function parseTie(file: string): WarmTie | undefined {
  try {
    const r = WarmTieSchema.safeParse(JSON.parse(readFileSync(file, 'utf8')));
    return r.success ? r.data : undefined;
  } catch {
    return undefined;
  }
}
