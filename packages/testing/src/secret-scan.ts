import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { credsInfo } from '@paddock/nats';
import { REPO_ROOT } from './app-process';

/** What `secret-scan.py` reports from inside a sandbox. */
export interface SecretScanReport {
  /** Each place a value was found, by the value's name. */
  hits: { needle: string; where: string }[];
  counts: { environ: number; cmdline: number; fds: number; files: number; bytes: number };
  /** /proc entries the sandbox user may not read (so nothing in them is readable to a sandbox either). */
  unreadable: string[];
  /** Paths that should not exist inside the sandbox but do. */
  present: string[];
}

export interface SecretScanInput {
  /** name → value to look for. */
  needles: Record<string, string>;
  /** Paths that must not be visible inside the sandbox (credential files, state directories). */
  absent?: string[];
  /** Unix ms: files under the host's /usr older than this are not read (nothing of the test's is there). */
  since: number;
}

/** Reversed and base64-encoded: the scanner's command line must not carry the values it looks for. */
const encode = (value: string): string => Buffer.from([...Buffer.from(value)].reverse()).toString('base64');

/**
 * The argv that, run inside a sandbox (Python 3 in its image), looks for `needles` in every
 * process's environ, cmdline, open files and mount table and in the sandbox's filesystem, and
 * prints a `SecretScanReport` as JSON.
 */
export function secretScanArgv(input: SecretScanInput): string[] {
  const script = readFileSync(join(REPO_ROOT, 'packages', 'testing', 'src', 'secret-scan.py'), 'utf8');
  const needles = Object.fromEntries(Object.entries(input.needles).map(([k, v]) => [k, encode(v)]));
  return ['python3', '-S', '-c', script, JSON.stringify({ needles, since: input.since / 1000, absent: input.absent ?? [] })];
}

/** The two secrets of a NATS `.creds` file's content: the user JWT and the user seed (`SU…`). */
export function credsSecrets(creds: string): { jwt: string; seed: string } {
  const seed = /SU[A-Z2-7]{56}/.exec(creds)?.[0];
  if (!seed) throw new Error('no user seed in the credentials');
  return { jwt: credsInfo(creds).jwt, seed };
}
