import type {
  FieldViolation,
  Policy,
  ResolvedSandboxSpec,
  RunnerCapabilities,
} from '@paddock/contracts';
import { resolveSandboxSpec } from './resolve';
import { checkSourceAccess } from './source-access';

/** One runner's verdict on a spec. */
export interface PlacementVerdict {
  runnerId: string;
  admitted: boolean;
  violations: FieldViolation[];
  resolved?: ResolvedSandboxSpec;
}

export interface PlacementCandidate {
  runnerId: string;
  policy: Policy | null;
  capabilities: RunnerCapabilities;
}

/**
 * For each runner, whether it admits the spec (and, given `caller.sourceIp`, the caller's address:
 * `controlPlaneAccess.sourceIpAllowlist`) and, if not, every reason. The gateway uses it to
 * pick runners, and to tell a user which constraint failed everywhere (see
 * {@link violationsCommonToAll}). Order follows the input.
 */
export function explainPlacement(
  spec: unknown,
  runners: readonly PlacementCandidate[],
  caller: { sourceIp?: string } = {},
): PlacementVerdict[] {
  return runners.map((r) => {
    const res = resolveSandboxSpec({ policy: r.policy, spec, capabilities: r.capabilities });
    // The caller's address is a property of the request, not of the spec: checked beside it.
    const source = caller.sourceIp === undefined ? null : checkSourceAccess(r.policy, caller.sourceIp);
    if (res.ok && !source) return { runnerId: r.runnerId, admitted: true, violations: [], resolved: res.resolved };
    return { runnerId: r.runnerId, admitted: false, violations: [...(source ? [source] : []), ...(res.ok ? [] : res.violations)] };
  });
}

/** Violations (by field and rule) that every rejecting runner reported: "what failed everywhere". */
export function violationsCommonToAll(
  verdicts: readonly PlacementVerdict[],
): { field: string; rule: string }[] {
  if (verdicts.length === 0 || verdicts.some((v) => v.admitted)) return [];
  const key = (v: FieldViolation): string => `${v.field}\u0000${v.rule}`;
  let common = new Set(verdicts[0]?.violations.map(key));
  for (const v of verdicts.slice(1)) {
    const mine = new Set(v.violations.map(key));
    common = new Set([...common].filter((k) => mine.has(k)));
  }
  return [...common].sort().map((k) => {
    const [field, rule] = k.split('\u0000') as [string, string];
    return { field, rule };
  });
}
