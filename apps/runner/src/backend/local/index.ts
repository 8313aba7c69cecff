/**
 * Local sandbox backend: bubblewrap + cgroups on this machine. It isolates with Linux namespaces
 * and cgroups on a shared kernel, for development and single-machine use; production isolation
 * comes from the Kubernetes backend's runtime classes. See README.md.
 */
export { LocalBackend, runnerCgroupsOf } from './local-backend';
export type { LocalBackendOptions, LocalImage } from './options';
export { checkLocalBackendPrerequisites, localBackendProblems, probeLocalBackend, type LocalBackendFacts, type LocalPrerequisiteProblem } from './prerequisites';
