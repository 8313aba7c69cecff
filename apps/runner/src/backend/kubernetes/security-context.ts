import { posix } from 'node:path';
import type { V1SecurityContext } from '@kubernetes/client-node';
import type { FieldViolation, ResolvedSandboxSpec } from '@paddock/contracts';
import type { LaunchSecurityContext } from '../sandbox-backend';
import { capabilityName, containersWithPaths, PLATFORM_SECCOMP_PROFILE } from '../security-context';

/**
 * A container's `securityContext` on the Kubernetes backend. Sandbox namespaces enforce Pod
 * Security `restricted` (infra/k8s/base/namespace.yaml), and the runner has no option to lower
 * that level: what `restricted` forbids is refused by name at create rather than left for
 * admission to reject the pod after the sandbox was accepted.
 *
 * - `runAsUser` / `runAsGroup`: the container's own; uid 0 is refused (`runAsNonRoot`).
 * - `capabilitiesAdd`: `restricted` allows adding only `NET_BIND_SERVICE` (after dropping ALL).
 * - `seccompProfile`: `RuntimeDefault`, or `Localhost/<path>`: the node's profile at `<path>`
 *   under the kubelet's seccomp directory (`localhostProfile`); a profile the node does not have
 *   fails the container at start. `Unconfined` and anything else are refused.
 */

/** The one capability Pod Security `restricted` lets a container add. */
export const RESTRICTED_CAPABILITIES: readonly string[] = ['NET_BIND_SERVICE'];
const LOCALHOST = 'Localhost/';

/** `Localhost/profiles/audit.json` → `profiles/audit.json`; undefined for any other profile or an unsafe path. */
export function localhostProfileOf(profile: string): string | undefined {
  if (!profile.startsWith(LOCALHOST)) return undefined;
  const path = profile.slice(LOCALHOST.length);
  if (path === '' || path.startsWith('/') || posix.normalize(path) !== path || path.split('/').some((s) => s === '..' || s === '.')) return undefined;
  return path;
}

/** What the containers' security contexts ask that a Pod Security `restricted` pod cannot have, each naming its field. */
export function kubernetesSecurityViolations(resolved: ResolvedSandboxSpec): FieldViolation[] {
  const out: FieldViolation[] = [];
  for (const { c, path } of containersWithPaths(resolved)) {
    const sc = c.securityContext;
    const sp = `${path}.securityContext`;
    if (sc.runAsUser === 0) {
      out.push({ field: `${sp}.runAsUser`, rule: 'runner_capability', description: 'sandbox pods run under Pod Security restricted (runAsNonRoot): uid 0 is refused; pick a non-zero uid' });
    }
    sc.capabilitiesAdd.forEach((cap, i) => {
      if (RESTRICTED_CAPABILITIES.includes(capabilityName(cap))) return;
      out.push({
        field: `${sp}.capabilitiesAdd[${i}]`,
        rule: 'runner_capability',
        description: `sandbox pods run under Pod Security restricted, which lets a container add only NET_BIND_SERVICE, not ${JSON.stringify(cap)}`,
      });
    });
    if (sc.seccompProfile !== PLATFORM_SECCOMP_PROFILE && localhostProfileOf(sc.seccompProfile) === undefined) {
      out.push({
        field: `${sp}.seccompProfile`,
        rule: 'runner_capability',
        description: `sandbox pods run under Pod Security restricted: the seccomp profile is ${PLATFORM_SECCOMP_PROFILE} or ${LOCALHOST}<relative path of a profile on the node>, never ${JSON.stringify(sc.seccompProfile)}`,
      });
    }
  }
  return out;
}

/**
 * The container security context fields a launch's `securityContext` sets, over the restricted
 * defaults (`pod-parts.ts`): only values `kubernetesSecurityViolations` admits reach here, and
 * ALL is always dropped, whatever is added back.
 */
export function securityContextOverrides(sc: LaunchSecurityContext | undefined): V1SecurityContext {
  if (!sc) return {};
  const add = (sc.capabilitiesAdd ?? []).filter((c) => RESTRICTED_CAPABILITIES.includes(c));
  const localhostProfile = sc.seccompProfile !== undefined ? localhostProfileOf(sc.seccompProfile) : undefined;
  return {
    ...(sc.runAsUser !== undefined && sc.runAsUser !== 0 ? { runAsUser: sc.runAsUser } : {}),
    ...(sc.runAsGroup !== undefined ? { runAsGroup: sc.runAsGroup } : {}),
    ...(add.length > 0 ? { capabilities: { drop: ['ALL'], add } } : {}),
    ...(localhostProfile !== undefined ? { seccompProfile: { type: 'Localhost', localhostProfile } } : {}),
  };
}
