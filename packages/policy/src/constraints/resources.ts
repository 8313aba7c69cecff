import type { RunnerCapabilities } from '@paddock/contracts';
import { type CompiledPolicy } from '../compile';
import { type Amount, type Dimension } from '../dimensions';
import * as m_dimensions from '../dimensions';
import { type MergedContainer } from '../merge';
import { type Sink } from '../violations';
import * as m_violations from '../violations';
import { type ConstraintInput } from './check';
import * as m_check from './check';

// Hot-path helpers bound once: transpilers (tsx/esbuild) turn imported names into getter
// calls on every use, which cost ~10% of a resolution. Locals are plain calls.
const { boundsOf, CPU, MEMORY } = m_dimensions;
const { addViolation, join } = m_violations;
const { CONSTRAINT } = m_check;

/** cpu and memory: one checker for both, the {@link Dimension} says what differs. */

const via = (a: Amount): string =>
  a.source === 'policy'
    ? ' (from the policy default)'
    : a.source === 'platform'
      ? ' (from the platform default)'
      : '';

/** Every amount of one container against the policy's per-container max (all) and min (requests). */
function checkAmounts(amounts: Amount[], d: Dimension, p: CompiledPolicy, sink: Sink): void {
  const { max, min, maxRaw, minRaw } = boundsOf(p, d);
  if (max === undefined && min === undefined) return;
  for (const a of amounts) {
    if (max !== undefined && a.value > max) {
      addViolation(
        sink,
        a.path,
        d.rules.max,
        `requested ${a.raw}${via(a)} exceeds the policy maximum ${maxRaw} (${d.constraints.max})`,
        { requested: a.raw, limit: maxRaw, constraint: d.constraints.max },
      );
    }
    if (a.isRequest && min !== undefined && a.value < min) {
      addViolation(
        sink,
        a.path,
        d.rules.min,
        `requested ${a.raw}${via(a)} is below the policy minimum ${minRaw} (${d.constraints.min})`,
        { requested: a.raw, limit: minRaw, constraint: d.constraints.min },
      );
    }
  }
}

/** The sandbox's total against the policy ceiling and the largest sandbox the runner hosts. */
function checkTotal(
  total: number,
  d: Dimension,
  p: CompiledPolicy,
  caps: RunnerCapabilities,
  sink: Sink,
): void {
  const { ceiling, ceilingRaw } = boundsOf(p, d);
  if (ceiling !== undefined && total > ceiling) {
    const shown = d.format(total);
    addViolation(
      sink,
      'containers',
      d.rules.ceiling,
      `the sandbox's total ${d.key} request ${shown}${d.totalNote} exceeds the policy ceiling ${ceilingRaw} (${d.constraints.ceiling})`,
      { requested: shown, limit: ceilingRaw, constraint: d.constraints.ceiling },
    );
  }
  const capText = caps[d.capsKey];
  const cap = capText !== undefined ? d.parse(capText) : null;
  if (cap !== null && total > cap) {
    const shown = d.format(total);
    addViolation(
      sink,
      'containers',
      'runner_capability',
      `the sandbox's total ${d.key} request ${shown} exceeds the largest sandbox the runner can host (${capText ?? ''})`,
      { requested: shown, limit: capText },
    );
  }
}

/** Declared limits, or a policy default (which sets requests = limits), satisfy the rule; a
 * container relying on requests alone or on the platform fallback does not. */
function checkRequireLimits(w: MergedContainer, d: Dimension, declared: boolean, sink: Sink): void {
  if (declared) return;
  addViolation(
    sink,
    join(w.path, `resourceRequirements.limits.${d.key}`),
    'require_limits',
    `the policy requires every container to declare ${d.key} requests and limits (${CONSTRAINT.requireLimits})`,
    { constraint: CONSTRAINT.requireLimits },
  );
}

export function checkCpuAndMemory({ merged, policy: p, caps, sink }: ConstraintInput): void {
  for (const w of merged.all) {
    checkAmounts(w.cpu.amounts, CPU, p, sink);
    checkAmounts(w.memory.amounts, MEMORY, p, sink);
    if (p.requireLimits) {
      checkRequireLimits(w, CPU, w.cpu.limitDeclared, sink);
      checkRequireLimits(w, MEMORY, w.memory.limitDeclared, sink);
    }
  }
  checkTotal(merged.totals.cpu, CPU, p, caps, sink);
  checkTotal(merged.memoryWithVolumes, MEMORY, p, caps, sink);
}
