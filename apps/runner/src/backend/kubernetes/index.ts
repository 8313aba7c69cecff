export { KubernetesBackend, type KubernetesBackendOptions } from './kubernetes-backend';
export { buildSandboxPod, buildSandboxNetworkPolicy, podNameFor, refusedGpuType, refusedRuntimeClass, runtimeClassFor, type SandboxPodOptions } from './sandbox-pod';
export { observePod } from './pod-state';
