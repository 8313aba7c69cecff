export { startController, type ControllerHandle } from './controller';
export { buildRunnerObjects, type KubeObject } from './builders/runner.manifests';
export { diagnoseInstall, type Diagnosis, type ObservedRunner } from './reconcile/diagnosis';
export { RunnerReconciler } from './reconcile/runner.reconciler';
export { WorkQueue } from './reconcile/work-queue';
export type { ClusterDriver } from './drivers/driver';
export { LocalDriver } from './drivers/local.driver';
export type { DesiredRunner } from './desired';
