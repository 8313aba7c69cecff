export { startK8sTestServer, type K8sTestServer, type K8sTestServerOptions, type RequestHook, type RequestHookResult, type RequestInfo } from './server';
export type { KubeletOptions } from './kubelet/kubelet';
export { checkPodSecurity, checkPodSecurityRestricted, type PodSecurityLevel } from './admission/pod-security';
export { validateManifest, manifestProblems, type ManifestProblem } from './validate';
export { filterNode, tolerates, unschedulableMessage } from './controllers/scheduler';
export { podTemplateHash } from './controllers/deployment';
export type { KubeObject, ObjectMeta, NodeSpecLite, Taint, Toleration, PodSpec, Container, SecurityContext, PodSecurityContext, Condition, ManagedFieldsEntry } from './types';
export type { StatusBody, StatusCause } from './store/errors';
export { rbacRulesIn, roleHook, type RoleRule } from './rbac';
