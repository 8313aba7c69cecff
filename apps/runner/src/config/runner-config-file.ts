import { readFile, stat } from 'node:fs/promises';
import { watch, type FSWatcher } from 'node:fs';
import { basename, dirname } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { RunnerConfigFileSchema, type RunnerConfigFile } from '@paddock/contracts';

export { RunnerConfigFileSchema, type RunnerConfigFile } from '@paddock/contracts';

export interface LoadedConfig {
  file: RunnerConfigFile;
  /** Identifies the content read, so an unchanged file is not re-applied. */
  fingerprint: string;
}

/**
 * Reads and validates the config file. YAML 1.1 rules, as for Kubernetes ConfigMaps; JSON is a
 * subset. Throws an Error naming the file and every invalid field.
 */
export async function loadRunnerConfigFile(path: string): Promise<LoadedConfig> {
  const text = await readFile(path, 'utf8');
  const raw: unknown = text.trim() === '' ? {} : parseYaml(text, { version: '1.1' });
  const parsed = RunnerConfigFileSchema.safeParse(raw ?? {});
  if (!parsed.success) {
    const list = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
    throw new Error(`runner config file ${path} is invalid: ${list}`);
  }
  return { file: parsed.data, fingerprint: text };
}

/**
 * Watches the config file and calls `onChange` with each new valid content.
 *
 * Writers replace the file by rename (ConfigMap symlink swaps, `write tmp + rename`), which
 * detaches an inode watch; so the DIRECTORY is watched and the file re-read by name, plus a
 * periodic stat as a fallback for filesystems where fs.watch misses events (overlay, NFS).
 * An invalid file is reported through `onError` and the last good config stays in force.
 */
export class ConfigFileWatcher {
  private watcher: FSWatcher | undefined;
  private timer: NodeJS.Timeout | undefined;
  private lastFingerprint: string | undefined;
  private lastStat = '';
  private reading: Promise<void> = Promise.resolve();

  constructor(
    private readonly path: string,
    private readonly onChange: (cfg: LoadedConfig) => void,
    private readonly onError: (err: Error) => void,
    private readonly pollMs = 1_000,
  ) {}

  /** Reads the file once (if present) and starts watching. */
  async start(): Promise<LoadedConfig | undefined> {
    let first: LoadedConfig | undefined;
    try {
      first = await loadRunnerConfigFile(this.path);
      this.lastFingerprint = first.fingerprint;
      this.lastStat = await this.statKey();
    } catch (e) {
      if (!isMissing(e)) this.onError(e as Error);
    }
    try {
      this.watcher = watch(dirname(this.path), (_event, name) => {
        if (name === null || name === basename(this.path) || name.startsWith('..')) this.check();
      });
      this.watcher.on('error', () => undefined);
    } catch {
      // The directory may not exist yet; the periodic stat below still picks the file up.
    }
    this.timer = setInterval(() => {
      void this.statKey().then((k) => {
        if (k !== this.lastStat) this.check();
      });
    }, this.pollMs);
    this.timer.unref();
    return first;
  }

  /** Re-reads the file now (serialized, so two events never race to apply an older content last). */
  check(): void {
    this.reading = this.reading.then(async () => {
      try {
        this.lastStat = await this.statKey();
        const cfg = await loadRunnerConfigFile(this.path);
        if (cfg.fingerprint === this.lastFingerprint) return;
        this.lastFingerprint = cfg.fingerprint;
        this.onChange(cfg);
      } catch (e) {
        if (!isMissing(e)) this.onError(e as Error);
      }
    });
  }

  /** Resolves once every read queued so far has been applied. */
  async settled(): Promise<void> {
    await this.reading;
  }

  stop(): void {
    this.watcher?.close();
    if (this.timer) clearInterval(this.timer);
  }

  private async statKey(): Promise<string> {
    try {
      const s = await stat(this.path);
      return `${s.ino}:${s.size}:${s.mtimeMs}`;
    } catch {
      return 'missing';
    }
  }
}

function isMissing(e: unknown): boolean {
  return typeof e === 'object' && e !== null && (e as { code?: string }).code === 'ENOENT';
}
