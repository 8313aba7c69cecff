import * as m_compile from '../compile';
import * as m_defaults from '../defaults';
import * as m_violations from '../violations';
import { type ConstraintInput } from './check';
import * as m_check from './check';

// Hot-path helpers bound once: transpilers (tsx/esbuild) turn imported names into getter
// calls on every use, which cost ~10% of a resolution. Locals are plain calls.
const { normCapability } = m_compile;
const { PLATFORM_DEFAULTS } = m_defaults;
const { addViolation, idx, join, show } = m_violations;
const { CONSTRAINT } = m_check;

/** Privilege, privilege escalation, added capabilities and the seccomp profile of each container. */
export function checkSecurity({ merged, policy: p, caps, sink }: ConstraintInput): void {
  for (const w of merged.all) {
    const sc = w.out.securityContext;
    if (sc.privileged) {
      if (!p.allowPrivileged) {
        addViolation(
          sink,
          join(w.path, 'securityContext.privileged'),
          'privileged_not_allowed',
          `privileged containers are not allowed by the policy (${CONSTRAINT.allowPrivileged})`,
          { requested: true, limit: false, constraint: CONSTRAINT.allowPrivileged },
        );
      }
      if (!caps.supportsPrivileged) {
        addViolation(
          sink,
          join(w.path, 'securityContext.privileged'),
          'runner_capability',
          'the runner cannot run privileged containers',
          { requested: true, limit: false },
        );
      }
    }
    if (sc.allowPrivilegeEscalation && !p.allowPrivileged) {
      addViolation(
        sink,
        join(w.path, 'securityContext.allowPrivilegeEscalation'),
        'privilege_escalation_not_allowed',
        `privilege escalation needs a policy that allows privileged containers (${CONSTRAINT.allowPrivileged})`,
        { requested: true, limit: false, constraint: CONSTRAINT.allowPrivileged },
      );
    }
    sc.capabilitiesAdd.forEach((cap, i) => {
      if (!p.allowedCapabilities.has(normCapability(cap))) {
        addViolation(
          sink,
          idx(join(w.path, 'securityContext.capabilitiesAdd'), i),
          'capability_not_allowed',
          `capability ${show(cap)} is not in the policy's allowed capabilities ${show([...p.allowedCapabilities])} (${CONSTRAINT.allowedCapabilities})`,
          {
            requested: cap,
            limit: [...p.allowedCapabilities],
            constraint: CONSTRAINT.allowedCapabilities,
          },
        );
      }
    });
    // Fail-closed: with no allowlist only the platform default profile is admitted.
    const seccompOk = p.allowedSeccomp.length
      ? p.allowedSeccomp.includes(sc.seccompProfile)
      : sc.seccompProfile === PLATFORM_DEFAULTS.seccompProfile;
    if (!seccompOk) {
      addViolation(
        sink,
        join(w.path, 'securityContext.seccompProfile'),
        'seccomp_profile_not_allowed',
        `seccomp profile ${show(sc.seccompProfile)} is not allowed (allowed: ${show(p.allowedSeccomp.length ? p.allowedSeccomp : [PLATFORM_DEFAULTS.seccompProfile])}) (${CONSTRAINT.allowedSeccomp})`,
        {
          requested: sc.seccompProfile,
          limit: p.allowedSeccomp.length ? p.allowedSeccomp : [PLATFORM_DEFAULTS.seccompProfile],
          constraint: CONSTRAINT.allowedSeccomp,
        },
      );
    }
  }
}
