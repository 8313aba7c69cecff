import type { ResolvedContainer, ResolvedSandboxSpec } from '@paddock/contracts';
import type { LaunchSpec } from '../backend/sandbox-backend';

/**
 * The launch fields a scheduling backend applies to the sandbox's pod beyond its containers: the
 * resolved annotations, the runner policy's `base` attachments and the GPU memory the primary
 * asked for. Pure. Each is present only when it asks for something, so a launch without them is
 * the same as before they existed (warm pools compare launches field by field).
 *
 * The policy engine refuses every one of them for a backend that does not declare its feature,
 * so a backend that receives one has promised to apply it or refuse it by name.
 */
export function podMetadataLaunchFields(resolved: ResolvedSandboxSpec, primary: ResolvedContainer): Pick<LaunchSpec, 'annotations' | 'base' | 'gpuMemoryGb'> {
  const { annotations: baseAnnotations, labels, containers, podSpec } = resolved.baseAttachments;
  const attaches = Object.keys(baseAnnotations).length > 0 || Object.keys(labels).length > 0 || containers.length > 0 || Object.keys(podSpec).length > 0;
  // Kept even without a GPU count, so the backend refuses it by name instead of it vanishing here.
  const gpuMemoryGb = primary.resources.limits.gpuMemoryGb ?? primary.resources.requests.gpuMemoryGb;
  return {
    ...(Object.keys(resolved.annotations).length > 0 ? { annotations: { ...resolved.annotations } } : {}),
    ...(attaches
      ? { base: { annotations: { ...baseAnnotations }, labels: { ...labels }, containers: containers.map((c) => ({ ...c })), podSpec: { ...podSpec } } }
      : {}),
    ...(gpuMemoryGb !== undefined ? { gpuMemoryGb } : {}),
  };
}
