import type { ResolvedSandboxSpec } from '@paddock/contracts';

/** JSON with sorted keys, so equal values always give equal keys. */
function sortedJson(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}

/**
 * What a sandbox must already have been started with to be served from a warm pool, as a key a
 * runner reports for each pool and the gateway computes for a create resolved against that
 * runner's policy: the primary container's image, command, working directory and resources, the
 * runtime class, the network posture (egress and ingress), services and mode. Environment, files,
 * tags and lifetime are left out: a taken sandbox receives those at take time. The gateway uses it
 * only to prefer a runner with a ready match; the runner itself decides a take on its full launch.
 */
export function warmPoolKey(resolved: ResolvedSandboxSpec): string {
  const primary = resolved.containers.find((c) => c.name === resolved.primaryContainer) ?? resolved.containers[0];
  return sortedJson({
    image: primary?.image ?? null,
    command: primary ? [...primary.command, ...primary.args] : [],
    workingDir: primary?.workingDir ?? null,
    resources: primary?.resources ?? null,
    containers: resolved.containers.length,
    initContainers: resolved.initContainers.length,
    volumes: resolved.volumes,
    runtimeClass: resolved.runtimeClass,
    egress: resolved.egress,
    ingress: resolved.ingress,
    services: resolved.services,
    mode: resolved.mode,
    instanceType: resolved.instanceType,
  });
}
