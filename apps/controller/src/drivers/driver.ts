import type { DesiredRunner } from '../desired';
import type { Diagnosis } from '../reconcile/diagnosis';

/**
 * Where runners actually live. The reconciler is the same for every driver: it reads desired
 * state, asks the driver to converge, then reports what the driver observes.
 * - `kubernetes`: namespace, RBAC, ConfigMap and Deployment applied with server-side apply.
 * - `local`: the "cluster" is this machine; each runner is a child process with a config file.
 */
export interface ClusterDriver {
  readonly kind: 'kubernetes' | 'local';
  /** Converges the runner's objects toward `desired` (idempotent). */
  apply(desired: DesiredRunner): Promise<void>;
  /** What the cluster says about the runner right now. */
  observe(desired: DesiredRunner): Promise<Diagnosis>;
  /**
   * Removes everything the runner owns, sandboxes included. Returns true once nothing is left
   * (deletion may take several calls: finalizers, pods terminating...).
   */
  teardown(runnerId: string, uid: string): Promise<boolean>;
  /** Runner uids that have objects in the cluster (to find leftovers of removed runners). */
  listDeployed(): Promise<{ runnerId: string; uid: string }[]>;
  /**
   * Stops every runner the driver started and their sandboxes, for a platform that is stopping
   * as a whole (`pnpm start` on Ctrl-C). Only the local driver's runners are processes of this
   * machine; a cluster's runners stay up when its controller stops.
   */
  stopRunners?(): Promise<void>;
  close(): Promise<void>;
}
