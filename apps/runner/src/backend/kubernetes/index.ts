export { KubernetesBackend, type KubernetesBackendOptions } from './kubernetes-backend';
export { buildSandboxPod, buildSandboxNetworkPolicy, podNameFor, refusedRuntimeClass, runtimeClassFor, type SandboxPodOptions } from './sandbox-pod';
export { observePod } from './pod-state';
