import type { V1PodSpec } from '@kubernetes/client-node';
import type { FieldViolation } from '@paddock/contracts';
import type { LaunchSpec } from '../sandbox-backend';
import { basePlacementOf, basePodSpecViolations } from './base-pod-spec';
import { gpuMemoryRequirement, gpuMemoryViolations, withRequiredNodeExpression } from './gpu-affinity';

/**
 * Where the sandbox pod may run: the GPU model it asked for (a node label), the GPU memory it
 * asked for (required node affinity), and the placement the runner policy's `base` adds
 * (tolerations, node selector and affinity, scheduler, priority class). The sandbox's own
 * requirements hold in every case: a base's node affinity gets them added to each of its terms,
 * and a base node selector that contradicts the GPU model is refused. Pure; nothing else of a
 * spec ever places the pod.
 */
export interface PlacementOptions {
  /** Node label naming each node's GPU model. */
  gpuTypeLabel: string;
}

/** The node labels the sandbox itself requires (its GPU model). */
function gpuNodeSelector(spec: LaunchSpec, opts: PlacementOptions): Record<string, string> {
  return spec.gpuCount && spec.gpuType !== undefined ? { [opts.gpuTypeLabel]: spec.gpuType } : {};
}

export function podPlacementOf(spec: LaunchSpec, opts: PlacementOptions): Pick<V1PodSpec, 'nodeSelector' | 'affinity' | 'tolerations' | 'schedulerName' | 'priorityClassName'> {
  const base = basePlacementOf(spec);
  const nodeSelector = { ...base.nodeSelector, ...gpuNodeSelector(spec, opts) };
  const gpuMemory = gpuMemoryRequirement(spec);
  const affinity = gpuMemory ? withRequiredNodeExpression(base.affinity, gpuMemory) : base.affinity;
  return {
    ...(Object.keys(nodeSelector).length > 0 ? { nodeSelector } : {}),
    ...(affinity ? { affinity } : {}),
    ...(base.tolerations?.length ? { tolerations: base.tolerations } : {}),
    ...(base.schedulerName ? { schedulerName: base.schedulerName } : {}),
    ...(base.priorityClassName ? { priorityClassName: base.priorityClassName } : {}),
  };
}

/** Why the pod cannot be placed as the launch asks; empty when it can. */
export function placementViolations(spec: LaunchSpec, opts: PlacementOptions): FieldViolation[] {
  return [...gpuMemoryViolations(spec), ...basePodSpecViolations(spec, gpuNodeSelector(spec, opts))];
}
