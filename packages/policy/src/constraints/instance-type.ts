import * as m_violations from '../violations';
import { type ConstraintInput } from './check';
import * as m_check from './check';

// Hot-path helpers bound once: transpilers (tsx/esbuild) turn imported names into getter
// calls on every use, which cost ~10% of a resolution. Locals are plain calls.
const { addViolation, show } = m_violations;
const { CONSTRAINT } = m_check;

/** A requested instance type against the policy's allowlist and what the runner offers. */
export function checkInstanceType({ read, policy: p, caps, sink }: ConstraintInput): void {
  const instanceType = read.instanceType;
  if (instanceType !== null) {
    if (p.instanceTypes.length && !p.instanceTypes.includes(instanceType)) {
      addViolation(
        sink,
        'instanceType',
        'instance_type_not_allowed',
        `instance type ${show(instanceType)} is not in the policy's allowed instance types ${show(p.instanceTypes)} (${CONSTRAINT.allowedInstanceTypes})`,
        {
          requested: instanceType,
          limit: p.instanceTypes,
          constraint: CONSTRAINT.allowedInstanceTypes,
        },
      );
    }
    if (caps.instanceTypes.length && !caps.instanceTypes.includes(instanceType)) {
      addViolation(
        sink,
        'instanceType',
        'runner_capability',
        `instance type ${show(instanceType)} is not offered by the runner (offers ${caps.instanceTypes.join(', ')})`,
        { requested: instanceType, limit: caps.instanceTypes },
      );
    }
  }
}
