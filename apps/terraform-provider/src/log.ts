/**
 * The provider's log: one JSON object per line on stderr, in the shape go-plugin parses
 * (`@level`, `@message`, `@timestamp`, `@module`), so Terraform shows it under TF_LOG. Every
 * registered secret (the API token) is replaced by `***` in whatever is written, as a last line of
 * defence: nothing logs the token on purpose.
 */
export type Level = 'trace' | 'debug' | 'info' | 'warn' | 'error';

export interface Logger {
  log(level: Level, message: string, fields?: Record<string, unknown>): void;
  /** Registers a value that must never appear in the log. */
  redact(secret: string): void;
}

/** go-plugin reads `@timestamp` with exactly six fractional digits; another form demotes the line to unparsed debug text. */
export const timestamp = (d: Date): string => d.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');

export function createLogger(write: (line: string) => void = (l) => process.stderr.write(l)): Logger {
  const secrets = new Set<string>();
  return {
    redact(secret) {
      if (secret.length >= 4) secrets.add(secret);
    },
    log(level, message, fields = {}) {
      let line = JSON.stringify({ '@level': level, '@message': message, '@module': 'provider.coreweave', '@timestamp': timestamp(new Date()), ...fields });
      for (const s of secrets) line = line.split(s).join('***');
      write(`${line}\n`);
    },
  };
}
