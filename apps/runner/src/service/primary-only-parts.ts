import { PaddockError, type Container, type FieldViolation, type SandboxSpec } from '@paddock/contracts';

/**
 * Parts of a container that a backend may give to the primary container only, refused by name on
 * any other container (a sidecar, an init container) instead of being dropped:
 * - files: the Kubernetes backend writes launch files through exec into the running sandbox
 *   container, and an init container has finished before any exec could reach it;
 * - GPUs: the sandbox's GPUs are the primary's (an extended resource cannot be shared between
 *   containers of a pod), so another container asking for one would silently get none.
 */
function violationsOf(c: Container, field: string): FieldViolation[] {
  const out: FieldViolation[] = [];
  if (c.files?.length) out.push({ field: `${field}.files`, rule: 'runner_capability', description: 'this runner writes launch files into the primary container only' });
  const gpus: [string, unknown][] = [
    ['resources.gpu', c.resources?.gpu],
    ['resourceRequirements.limits.gpu', c.resourceRequirements?.limits?.gpu],
    ['resourceRequirements.requests.gpu', c.resourceRequirements?.requests?.gpu],
  ];
  for (const [path, gpu] of gpus) {
    if (gpu !== undefined) out.push({ field: `${field}.${path}`, rule: 'runner_capability', description: "the sandbox's GPUs go to its primary container only" });
  }
  return out;
}

/** Refuses files and GPUs asked of a container other than the primary (`primaryIndex` in `spec.containers`). */
export function checkPrimaryOnlyParts(spec: SandboxSpec, primaryIndex: number): void {
  const violations = [
    ...spec.containers.flatMap((c, i) => (i === primaryIndex ? [] : violationsOf(c, `containers[${i}]`))),
    ...(spec.initContainers ?? []).flatMap((c, i) => violationsOf(c, `initContainers[${i}]`)),
  ];
  if (violations.length === 0) return;
  throw new PaddockError('invalid_argument', `this runner gives these to the primary container only: ${violations.map((v) => v.field).join(', ')}`, {
    reason: 'CWSANDBOX_INVALID_REQUEST',
    violations,
  });
}
