import * as m_violations from '../violations';
import { type ConstraintInput } from './check';
import * as m_check from './check';

// Hot-path helpers bound once: transpilers (tsx/esbuild) turn imported names into getter
// calls on every use, which cost ~10% of a resolution. Locals are plain calls.
const { addViolation, show } = m_violations;
const { CONSTRAINT } = m_check;

/** A pinned runtime class against the policy's allowlist; the chosen one against the runner. */
export function checkRuntimeClass({ read, merged, policy: p, caps, sink }: ConstraintInput): void {
  const pin = read.runtimeClass;
  const rc = merged.runtimeClass;
  const source = merged.runtimeClassSource;
  if (pin !== undefined) {
    if (p.allowedRuntimeClasses.length === 0) {
      addViolation(
        sink,
        'runtimeClass',
        'runtime_class_not_allowed',
        `the policy has no allowedRuntimeClasses, so a sandbox cannot pin a runtime class; omit runtimeClass to use the default (${CONSTRAINT.allowedRuntimeClasses})`,
        {
          requested: pin,
          limit: [],
          constraint: CONSTRAINT.allowedRuntimeClasses,
        },
      );
    } else if (!p.allowedRuntimeClasses.includes(pin)) {
      addViolation(
        sink,
        'runtimeClass',
        'runtime_class_not_allowed',
        `runtime class ${show(pin)} is not in the policy's allowed runtime classes ${show(p.allowedRuntimeClasses)} (${CONSTRAINT.allowedRuntimeClasses})`,
        {
          requested: pin,
          limit: p.allowedRuntimeClasses,
          constraint: CONSTRAINT.allowedRuntimeClasses,
        },
      );
    }
  }
  if (rc === null) return;
  const origin = source === 'pin' ? '' : ' (the policy default)';
  if (caps.isolation === 'namespaces') {
    addViolation(
      sink,
      'runtimeClass',
      'runner_capability',
      `runtime class ${show(rc)}${origin} cannot be applied: the runner isolates with namespaces, not runtime classes`,
      { requested: rc, limit: caps.isolation },
    );
  } else if (caps.runtimeClasses.length > 0 && !caps.runtimeClasses.includes(rc)) {
    addViolation(
      sink,
      'runtimeClass',
      'runner_capability',
      `runtime class ${show(rc)}${origin} is not offered by the runner (offers ${caps.runtimeClasses.join(', ')})`,
      { requested: rc, limit: caps.runtimeClasses },
    );
  }
}
