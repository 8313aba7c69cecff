import type { Ctx } from '../context';

/** What the progress lines need of a sandbox's status. */
export interface CreationStatus {
  state: string;
  message?: string;
}

/**
 * Runs `wait` (the SDK's long poll until the sandbox started) and, while it runs, reads the
 * sandbox's status every `intervalMs` and prints each new CREATING message (`pulling image …`,
 * `unpacking image …`) as its own line on stderr, then the state it reached. Only when stderr is a
 * terminal: stdout carries data (`-o name` is read by scripts) and a redirected stderr stays quiet,
 * as every other progress line of the CLI.
 */
export async function waitShowingCreation<T>(
  ctx: Ctx,
  sandboxId: string,
  wait: () => Promise<T>,
  readStatus: () => Promise<CreationStatus>,
  intervalMs = 500,
): Promise<T> {
  const onTerminal = ctx.io.stderrIsTTY ?? ctx.io.stdoutIsTTY;
  if (!onTerminal) return wait();
  const line = (text: string): void => ctx.io.stderr(`\r\x1b[2K${text}\n`);
  let last = '';
  let done = false;
  const show = (s: CreationStatus): void => {
    if (s.message && s.message !== last && (s.state === 'STATE_CREATING' || s.state === 'STATE_PENDING')) {
      last = s.message;
      line(`sandbox ${sandboxId}: ${s.message}`);
    }
  };
  const watch = (async (): Promise<void> => {
    while (!done) {
      // A failed read only skips one line of progress; the wait itself reports real failures.
      show(await readStatus().catch(() => ({ state: '' })));
      if (done) return;
      await new Promise((resolve) => setTimeout(resolve, intervalMs));
    }
  })();
  try {
    const out = await ctx.withProgress(`waiting for sandbox ${sandboxId} to run`, wait);
    done = true;
    await watch;
    const final = await readStatus().catch(() => undefined);
    if (final) line(`sandbox ${sandboxId}: ${final.state.replace(/^STATE_/, '')}`);
    return out;
  } finally {
    done = true;
    await watch;
  }
}
