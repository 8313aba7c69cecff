import type { SpecFeature } from '@paddock/contracts';

/**
 * The spec features the Kubernetes backend honours, beyond the one-container baseline. Every
 * feature missing here is refused by name when a spec uses it (the policy engine checks the
 * runner's `specFeatures`); a feature is added only once `sandbox-pod.ts` applies it, with the
 * every-field test (`test/unit/every-spec-field.spec.ts`) showing it on the generated pod.
 */
export const KUBERNETES_SPEC_FEATURES: readonly SpecFeature[] = [
  // The sandbox container always has `readOnlyRootFilesystem: true` (Pod Security restricted).
  'securityContext.readOnlyRootFilesystem',
  // The sandbox container always drops ALL capabilities, so any drop list is already satisfied.
  'securityContext.capabilitiesDrop',
  // The container's own uid/gid, NET_BIND_SERVICE, and RuntimeDefault or a node's Localhost
  // profile; what Pod Security restricted forbids is refused at create (security-context.ts).
  'securityContext.runAsUser',
  'securityContext.runAsGroup',
  'securityContext.capabilitiesAdd',
  'securityContext.seccompProfile',
  // A dockerconfigjson Secret per sandbox, resolved with the create, in the pod's imagePullSecrets.
  'imagePullCredentials',
  // Sidecars are more containers of the pod, init containers its `initContainers` (pod-parts.ts),
  // with the sandbox container's restricted security context.
  'containers.multiple',
  'initContainers',
  // Scratch volumes are `emptyDir`s (`medium: Memory` for memory) with a `sizeLimit`.
  'volumes.scratch',
  'volumeMounts',
  'volumeMounts.readOnly',
  'volumeMounts.subPath',
  // An exec startupProbe on the sandbox container; RUNNING waits for the kubelet's `started`.
  'startupProbe',
  // A ClusterIP Service per public port, owned by the pod; the gateway's relay connects through it (services.ts).
  'services',
  // Pod annotations, and the runner policy's pinned annotations and labels over them; keys under
  // the platform's `paddock.dev/` and runtime/security prefixes are refused at create (pod-metadata.ts).
  'annotations',
  'base.annotations',
  'base.labels',
  // A base's placement fields (tolerations, nodeSelector, node affinity, scheduler, priority class);
  // every other pod field of a base is refused at create by name (base-pod-spec.ts).
  'base.podSpec',
  // Required node affinity on GPU Feature Discovery's `nvidia.com/gpu.memory` (gpu-affinity.ts).
  'gpu.memoryGb',
  // Resolved secret values in a per-sandbox Secret, read through secretKeyRef (secret-env.ts).
  'secretStores',
];
