#!/usr/bin/env node
/**
 * `paddock-policy`: check a policy before deploying it, or see how a sandbox spec resolves.
 *
 *   paddock-policy validate FILE
 *   paddock-policy resolve [--policy P] --spec S [--capabilities C]
 *
 * Files are JSON or YAML, snake_case or camelCase. A whole ManagedRunner document (with
 * `identity`/`spec`/`policy`, like the seeds' runner.yaml) is accepted: its `policy` is used.
 * Without --policy the platform default policy applies. The result is printed as JSON on stdout;
 * a rejection also prints one human-readable line per violation on stderr.
 * Exit codes: 0 ok, 1 rejected, 2 usage or unreadable input.
 */
import { readFileSync } from 'node:fs';
import type { FieldViolation, Policy, RunnerCapabilities } from '@paddock/contracts';
import { FULL_CAPABILITIES, RunnerCapabilitiesSchema } from '@paddock/contracts';
import { parsePolicyDocument } from './document';
import { isObj } from './network';
import { resolveSandboxSpec } from './resolve';
import { validatePolicy } from './validate-policy';

export interface CliIo {
  stdout: (s: string) => void;
  stderr: (s: string) => void;
  readFile: (path: string) => string;
}

const USAGE = `usage:
  paddock-policy validate FILE
  paddock-policy resolve [--policy FILE] --spec FILE [--capabilities FILE]
files are JSON or YAML (snake_case or camelCase); exit 0 ok, 1 rejected, 2 usage`;

class UsageError extends Error {}

function load(
  io: CliIo,
  path: string,
): { ok: true; value: unknown } | { ok: false; violations: FieldViolation[] } {
  let text: string;
  try {
    text = io.readFile(path);
  } catch (e) {
    throw new UsageError(`cannot read ${path}: ${e instanceof Error ? e.message : String(e)}`);
  }
  return parsePolicyDocument(text);
}

/** A ManagedRunner document carries its policy under `policy`; a bare policy is used as is. */
function policyOf(doc: unknown): unknown {
  if (isObj(doc) && isObj(doc.policy) && (doc.identity !== undefined || doc.spec !== undefined)) {
    return doc.policy;
  }
  return doc;
}

function reject(io: CliIo, violations: FieldViolation[], label: string): number {
  io.stdout(JSON.stringify({ ok: false, violations }, null, 2) + '\n');
  for (const v of violations) io.stderr(`${label}: ${v.description} [${v.rule}]\n`);
  return 1;
}

function parseFlags(args: string[], allowed: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    const eq = a.indexOf('=');
    const name = a.startsWith('--') ? (eq > 0 ? a.slice(2, eq) : a.slice(2)) : '';
    if (!name || !allowed.includes(name)) {
      throw new UsageError(`unexpected argument ${JSON.stringify(a)}`);
    }
    const value = eq > 0 ? a.slice(eq + 1) : args[++i];
    if (value === undefined || value === '') throw new UsageError(`--${name} needs a value`);
    out[name] = value;
  }
  return out;
}

function validateCmd(args: string[], io: CliIo): number {
  if (args.length !== 1 || (args[0] as string).startsWith('--')) {
    throw new UsageError('validate takes exactly one FILE');
  }
  const doc = load(io, args[0] as string);
  if (!doc.ok) return reject(io, doc.violations, args[0] as string);
  const res = validatePolicy(policyOf(doc.value));
  if (!res.ok) return reject(io, res.violations, args[0] as string);
  io.stdout(JSON.stringify({ ok: true, policy: res.policy }, null, 2) + '\n');
  return 0;
}

function resolveCmd(args: string[], io: CliIo): number {
  const flags = parseFlags(args, ['policy', 'spec', 'capabilities']);
  if (!flags.spec) throw new UsageError('resolve needs --spec FILE');
  let policy: Policy | null = null;
  if (flags.policy) {
    const doc = load(io, flags.policy);
    if (!doc.ok) return reject(io, doc.violations, flags.policy);
    const v = validatePolicy(policyOf(doc.value));
    if (!v.ok) {
      return reject(
        io,
        v.violations.map((x) => ({ ...x, field: `policy.${x.field}` })),
        flags.policy,
      );
    }
    policy = v.policy;
  }
  let capabilities: RunnerCapabilities = FULL_CAPABILITIES;
  if (flags.capabilities) {
    const doc = load(io, flags.capabilities);
    if (!doc.ok) return reject(io, doc.violations, flags.capabilities);
    const c = RunnerCapabilitiesSchema.safeParse(doc.value);
    if (!c.success) {
      const violations = c.error.issues.map((i) => ({
        field: `capabilities.${i.path.map(String).join('.')}`,
        rule: 'type',
        description: `capabilities.${i.path.map(String).join('.')}: ${i.message}`,
      }));
      return reject(io, violations, flags.capabilities);
    }
    capabilities = c.data;
  }
  const spec = load(io, flags.spec);
  if (!spec.ok) return reject(io, spec.violations, flags.spec);
  const res = resolveSandboxSpec({ policy, spec: spec.value, capabilities });
  if (!res.ok) return reject(io, res.violations, flags.spec);
  io.stdout(JSON.stringify({ ok: true, resolved: res.resolved }, null, 2) + '\n');
  return 0;
}

/** Runs the CLI; returns the exit code (never exits the process itself, so tests can call it). */
export function main(argv: readonly string[], io: CliIo): number {
  const [cmd, ...rest] = argv;
  try {
    switch (cmd ?? '') {
      case 'validate':
        return validateCmd(rest, io);
      case 'resolve':
        return resolveCmd(rest, io);
      case '-h':
      case '--help':
      case 'help':
        io.stdout(USAGE + '\n');
        return 0;
      default:
        throw new UsageError(
          cmd === undefined ? 'missing command' : `unknown command ${JSON.stringify(cmd)}`,
        );
    }
  } catch (e) {
    if (e instanceof UsageError) {
      io.stderr(`paddock-policy: ${e.message}\n${USAGE}\n`);
      return 2;
    }
    throw e;
  }
}

export const nodeIo: CliIo = {
  stdout: (s) => process.stdout.write(s),
  stderr: (s) => process.stderr.write(s),
  readFile: (p) => readFileSync(p, 'utf8'),
};

if (require.main === module) process.exitCode = main(process.argv.slice(2), nodeIo);
