import { PaddockError, type ResolvedContainer, type ResolvedSandboxSpec } from '@paddock/contracts';
import type { LaunchSecurityContext, LaunchSpec, SandboxBackend } from '../backend/sandbox-backend';
import { capabilityName, PLATFORM_SECCOMP_PROFILE } from '../backend/security-context';

/**
 * A resolved container's security context as a backend applies it: only what differs from what
 * every sandbox already has, so a spec that asks for nothing launches exactly as before. Pure.
 */
export function launchSecurityOf(c: ResolvedContainer): { securityContext?: LaunchSecurityContext } {
  const sc = c.securityContext;
  const caps = [...new Set(sc.capabilitiesAdd.map(capabilityName))];
  const out: LaunchSecurityContext = {
    ...(sc.runAsUser !== null ? { runAsUser: sc.runAsUser } : {}),
    ...(sc.runAsGroup !== null ? { runAsGroup: sc.runAsGroup } : {}),
    ...(caps.length > 0 ? { capabilitiesAdd: caps } : {}),
    ...(sc.seccompProfile !== PLATFORM_SECCOMP_PROFILE ? { seccompProfile: sc.seccompProfile } : {}),
  };
  return Object.keys(out).length > 0 ? { securityContext: out } : {};
}

/**
 * Refuses, naming each field, what of an admitted spec the backend cannot run as asked (a
 * security context it cannot give, pod metadata no pod may carry): a value is honoured exactly
 * or refused, never weakened into something nearby.
 */
export function checkLaunchViolations(resolved: ResolvedSandboxSpec, launch: LaunchSpec, backend: Pick<SandboxBackend, 'launchViolations'>): void {
  const violations = backend.launchViolations?.(resolved, launch) ?? [];
  if (violations.length === 0) return;
  throw new PaddockError(
    'invalid_argument',
    `this runner cannot run these as asked: ${violations.map((v) => `${v.field} (${v.description})`).join('; ')}`,
    { reason: 'CWSANDBOX_INVALID_REQUEST', violations },
  );
}
