import type { FieldViolation, ManagedRunner } from '@paddock/contracts';
import type { Ctx } from '../context';
import { CliError, EXIT, UsageError } from '../errors';
import { isRecord, parseDocument, readInput } from '../input';
import { loadCase, loadPolicyDocument, loadPolicyEngine } from '../lazy';
import { toJson, toYaml } from '../output';
import { fetchRunner } from './runner';

const enc = encodeURIComponent;

export async function policyGet(ctx: Ctx, runnerId: string, opts: { output?: string }): Promise<void> {
  const r = await fetchRunner(ctx, runnerId);
  // Exported without its etag on purpose (the product's documented behaviour, so an export never pins a stale version): use `edit --print-template` to pin one.
  if (opts.output === 'json') return ctx.out(toJson(r.policy));
  const { camelToSnakeDeep } = await loadCase();
  ctx.out(r.policy === null ? 'null' : toYaml(opts.output === 'yaml-camel' ? r.policy : camelToSnakeDeep(r.policy)));
}

export async function policyDescribe(ctx: Ctx, runnerId: string, opts: { output?: string }): Promise<void> {
  const r = await fetchRunner(ctx, runnerId);
  const summary = { runnerId: r.identity.runnerId, etag: r.etag, usingDefaultPolicy: r.usingDefaultPolicy, policy: r.policy };
  if (opts.output === 'json') return ctx.out(toJson(summary));
  const lines = [
    `Runner:   ${r.identity.runnerId}`,
    `Etag:     ${r.etag}`,
    `Policy:   ${r.usingDefaultPolicy ? 'platform default (none configured)' : (r.policy?.displayName ?? '(unnamed)')}`,
  ];
  const c = r.policy?.constraints;
  if (c) {
    for (const [group, value] of Object.entries(c)) lines.push(`  ${group}: ${JSON.stringify(value)}`);
  }
  ctx.out(lines.join('\n'));
}

/** Accepts a bare policy document, or the `{policy, etag}` file of the seed's curl flow. */
function unwrapPolicy(doc: Record<string, unknown>): { policy: unknown; etag?: string } {
  const keys = Object.keys(doc);
  if ('policy' in doc && keys.every((k) => k === 'policy' || k === 'etag')) {
    return { policy: doc.policy, etag: typeof doc.etag === 'string' ? doc.etag : undefined };
  }
  return { policy: doc };
}

export async function policyEdit(ctx: Ctx, runnerId: string, opts: { file?: string; etag?: string; printTemplate?: boolean }): Promise<void> {
  const { snakeToCamelDeep, camelToSnakeDeep } = await loadCase();
  let policy: unknown;
  let etag = opts.etag;
  if (opts.printTemplate) {
    const r = await fetchRunner(ctx, runnerId);
    return ctx.out(toYaml({ etag: r.etag, policy: camelToSnakeDeep(r.policy ?? {}) }));
  }
  if (opts.file) {
    const parsed = parseDocument(readInput(opts.file, ctx.io.readStdin), opts.file === '-' ? 'stdin' : opts.file);
    if (parsed !== null && !isRecord(parsed)) throw new UsageError('a policy must be a mapping (use {} for the fully permissive posture)');
    const unwrapped = unwrapPolicy(isRecord(parsed) ? parsed : {});
    policy = snakeToCamelDeep(unwrapped.policy);
    etag = etag ?? unwrapped.etag;
    // Without --etag (or one in the file) the current revision is read right before submitting,
    // as the seeds describe: that does not pin the revision the file came from.
    if (!etag) etag = (await fetchRunner(ctx, runnerId)).etag;
  } else {
    if (!ctx.io.stdinIsTTY) throw new UsageError('no input: pass -f FILE (or -f -), or run interactively on a terminal');
    const r = await fetchRunner(ctx, runnerId);
    etag = etag ?? r.etag;
    const edited = ctx.editText(`# Policy of runner ${runnerId} (etag ${r.etag}). Save to submit.\n${toYaml(camelToSnakeDeep(r.policy ?? {}))}`);
    const parsed = parseDocument(edited, 'editor');
    if (!isRecord(parsed)) throw new UsageError('a policy must be a mapping');
    policy = snakeToCamelDeep(parsed);
    if (JSON.stringify(policy) === JSON.stringify(r.policy ?? {})) return ctx.out(`runner/${runnerId}: no changes`);
  }
  await ctx.controlPlane().request<ManagedRunner>(
    'updating runner',
    'PATCH',
    `/v1/sandbox/managedRunners/${enc(runnerId)}?updateMask=policy`,
    { identity: { runnerId }, policy, etag },
  );
  ctx.out(`runner/${runnerId}: policy updated`);
}

function renderViolations(violations: FieldViolation[]): string {
  return violations.map((v) => `  - ${v.field}: ${v.description} (${v.rule})`).join('\n');
}

export async function policyValidate(ctx: Ctx, opts: { file: string; runner?: string }): Promise<void> {
  const engine = await loadPolicyEngine();
  const { snakeToCamelDeep } = await loadCase();
  const text = readInput(opts.file, ctx.io.readStdin);
  // The policy engine's own hardened parser (aliases, depth, huge numbers, duplicate keys refused).
  const { parsePolicyDocument } = await loadPolicyDocument();
  const parsed = parsePolicyDocument(text);
  if (!parsed.ok) throw new CliError(`validating policy: invalid_argument:\n${renderViolations(parsed.violations)}`, EXIT.refused);
  const doc = isRecord(parsed.value) ? unwrapPolicy(parsed.value).policy : parsed.value;
  const result = engine.validatePolicy(snakeToCamelDeep(doc));
  if (!result.ok) throw new CliError(`validating policy: invalid_argument: ${result.violations.length} violation(s)\n${renderViolations(result.violations)}`, EXIT.refused);
  ctx.out(`policy is valid${opts.runner ? '' : ' (checked offline with the same engine the control plane uses)'}`);
}
