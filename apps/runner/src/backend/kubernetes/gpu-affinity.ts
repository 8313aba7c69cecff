import type { V1Affinity, V1NodeSelectorRequirement } from '@kubernetes/client-node';
import type { FieldViolation } from '@paddock/contracts';
import type { LaunchSpec } from '../sandbox-backend';

/**
 * GPU selection by memory (`resources.gpu.memoryGb`): the pod requires nodes whose GPUs have at
 * least that much memory, by the label NVIDIA's GPU Feature Discovery sets on each GPU node,
 * `nvidia.com/gpu.memory` (one GPU's memory, in MiB). The GPU count is still requested as the
 * extended resource; the label only narrows which nodes may run the pod, so a cluster without
 * GPU Feature Discovery leaves such a pod unschedulable rather than on a smaller GPU.
 */
export const GPU_MEMORY_LABEL = 'nvidia.com/gpu.memory';

/** `memoryGb` GB or more, in the label's MiB: node selector operators compare integers strictly. */
export function gpuMemoryRequirement(spec: Pick<LaunchSpec, 'gpuCount' | 'gpuMemoryGb'>): V1NodeSelectorRequirement | undefined {
  if (!spec.gpuCount || spec.gpuMemoryGb === undefined) return undefined;
  return { key: GPU_MEMORY_LABEL, operator: 'Gt', values: [String(spec.gpuMemoryGb * 1024 - 1)] };
}

/** A GPU memory asked for without any GPU selects nothing: refused by name, never dropped. */
export function gpuMemoryViolations(spec: Pick<LaunchSpec, 'gpuCount' | 'gpuMemoryGb'>): FieldViolation[] {
  if (spec.gpuMemoryGb === undefined || spec.gpuCount) return [];
  return [{ field: 'gpu.memoryGb', rule: 'requires_gpu_count', description: 'a GPU memory selects the GPUs a sandbox gets; ask for a GPU count with it' }];
}

/**
 * `affinity` with `req` added to its required node affinity: to every required term (terms are
 * alternatives, a term's expressions all hold), or as the one term when there is none.
 */
export function withRequiredNodeExpression(affinity: V1Affinity | undefined, req: V1NodeSelectorRequirement): V1Affinity {
  const nodeAffinity = affinity?.nodeAffinity ?? {};
  const terms = nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? [];
  const required = terms.length > 0 ? terms.map((t) => ({ ...t, matchExpressions: [...(t.matchExpressions ?? []), req] })) : [{ matchExpressions: [req] }];
  return { ...affinity, nodeAffinity: { ...nodeAffinity, requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: required } } };
}
