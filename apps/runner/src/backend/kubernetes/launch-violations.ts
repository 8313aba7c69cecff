import { PaddockError, type FieldViolation } from '@paddock/contracts';
import type { LaunchSpec } from '../sandbox-backend';
import { podMetadataViolations } from './pod-metadata';
import { placementViolations } from './pod-placement';
import { secretEnvViolations } from './secret-env';
import { DEFAULT_GPU_TYPE_LABEL, type SandboxPodOptions } from './sandbox-pod';

/**
 * What of a launch's metadata, base attachments, GPU memory and secret env the pod cannot carry
 * as written, each naming its field (empty = nothing): the policy engine admits these fields for
 * this backend, and this is where the ones no pod may hold are refused instead of dropped.
 */
export function podLaunchViolations(spec: LaunchSpec, opts: SandboxPodOptions): FieldViolation[] {
  return [...podMetadataViolations(spec), ...placementViolations(spec, { gpuTypeLabel: opts.gpuTypeLabel ?? DEFAULT_GPU_TYPE_LABEL }), ...secretEnvViolations(spec)];
}

/** Throws the launch's violations as one policy violation, naming every field. */
export function refusePodLaunchViolations(spec: LaunchSpec, opts: SandboxPodOptions): void {
  const violations = podLaunchViolations(spec, opts);
  if (violations.length === 0) return;
  throw new PaddockError('failed_precondition', `the Kubernetes backend cannot run ${violations.map((v) => `${v.field} (${v.rule}): ${v.description}`).join('; ')}`, {
    reason: 'CWSANDBOX_POLICY_VIOLATION',
    violations,
  });
}
