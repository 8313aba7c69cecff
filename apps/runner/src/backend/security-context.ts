import type { ResolvedContainer, ResolvedSandboxSpec } from '@paddock/contracts';

/** The seccomp profile every sandbox has when its spec names none. */
export const PLATFORM_SECCOMP_PROFILE = 'RuntimeDefault';

/** `cap_net_bind_service` → `NET_BIND_SERVICE`: the policy engine compares capabilities in this form too. */
export const capabilityName = (c: string): string => c.toUpperCase().replace(/^CAP_/, '');

/** Every container of a resolved spec with the field path a violation on it names (`containers[1]`, `initContainers[0]`). */
export function containersWithPaths(resolved: ResolvedSandboxSpec): { c: ResolvedContainer; path: string }[] {
  return [
    ...resolved.containers.map((c, i) => ({ c, path: `containers[${i}]` })),
    ...resolved.initContainers.map((c, i) => ({ c, path: `initContainers[${i}]` })),
  ];
}
