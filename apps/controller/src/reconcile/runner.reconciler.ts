import type { RunnerInstallReport } from '@paddock/contracts';
import type { DesiredSource } from '../desired-source';
import type { ClusterDriver } from '../drivers/driver';
import type { Diagnosis } from './diagnosis';
import type { ReconcileResult } from './work-queue';

export interface ReportSink {
  publish(report: RunnerInstallReport): Promise<void>;
}

export interface ReconcilerOptions {
  clusterId: string;
  controllerId: string;
  /** Monotonic per leadership term: the control plane ignores reports with an older token. */
  fencingToken: () => number;
  now: () => Date;
  /** How soon to look again while a rollout is in progress. */
  progressRequeueMs?: number;
  log?: (msg: string, fields?: Record<string, unknown>) => void;
}

/**
 * One reconciler for the runner kind (STYLE B.9): key = runner uid. Reads desired state, converges,
 * observes, reports. Never sees the event that triggered it, so a lost, duplicated or reordered
 * event cannot make it do the wrong thing.
 */
export class RunnerReconciler {
  /** Last report per runner, to publish only changes (a periodic resync republishes everything). */
  private readonly lastReported = new Map<string, string>();
  /** Runner ids by uid, to clean up after a runner has left the read model. */
  private readonly known = new Map<string, string>();

  constructor(
    private readonly source: DesiredSource,
    private readonly driver: ClusterDriver,
    private readonly sink: ReportSink,
    private readonly opts: ReconcilerOptions,
  ) {}

  async reconcile(uid: string, force = false): Promise<ReconcileResult> {
    const desired = await this.source.byUid(uid);
    if (!desired) {
      // Gone from the read model (removed, or never ours): make sure nothing is left behind.
      const runnerId = this.known.get(uid);
      if (runnerId) {
        const gone = await this.driver.teardown(runnerId, uid);
        if (!gone) return { requeueAfterMs: 500 };
        this.known.delete(uid);
        this.lastReported.delete(runnerId);
      }
      return;
    }
    this.known.set(uid, desired.runnerId);
    if (desired.deleting) {
      const gone = await this.driver.teardown(desired.runnerId, uid);
      if (!gone) return { requeueAfterMs: 500 };
      this.opts.log?.('Runner torn down', { runnerId: desired.runnerId });
      await this.report(desired.runnerId, desired.organizationId, { installStatus: 'RUNNER_INSTALL_STATUS_DELETING' }, true, true);
      return;
    }
    await this.driver.apply(desired);
    const diagnosis = await this.driver.observe(desired);
    if (diagnosis.undetermined) return { requeueAfterMs: this.opts.progressRequeueMs ?? 500 };
    await this.report(desired.runnerId, desired.organizationId, diagnosis, false, force);
    if (diagnosis.installStatus === 'RUNNER_INSTALL_STATUS_PROVISIONING') return { requeueAfterMs: this.opts.progressRequeueMs ?? 500 };
    if (diagnosis.installStatus === 'RUNNER_INSTALL_STATUS_FAILED') return { requeueAfterMs: 5_000 };
    return;
  }

  /** Removes objects of runners that no longer exist in the read model (e.g. after a missed event). */
  async collectGarbage(): Promise<number> {
    const wanted = new Set((await this.source.all()).map((d) => d.uid));
    let removed = 0;
    for (const d of await this.driver.listDeployed()) {
      if (wanted.has(d.uid)) continue;
      if (await this.driver.teardown(d.runnerId, d.uid)) removed++;
    }
    return removed;
  }

  private async report(runnerId: string, organizationId: string, d: Diagnosis, gone: boolean, force: boolean): Promise<void> {
    const report: RunnerInstallReport = {
      runnerId,
      organizationId,
      clusterId: this.opts.clusterId,
      installStatus: d.installStatus,
      ...(d.activeRevision !== undefined ? { activeRevision: d.activeRevision } : {}),
      installError: d.installError ?? null,
      gone,
      controllerId: this.opts.controllerId,
      fencingToken: this.opts.fencingToken(),
      reportedAt: this.opts.now().toISOString(),
    };
    const key = JSON.stringify({ ...report, reportedAt: undefined, installError: d.installError ? { ...d.installError, occurredAt: undefined } : null });
    if (!force && this.lastReported.get(runnerId) === key) return;
    this.lastReported.set(runnerId, key);
    await this.sink.publish(report);
  }
}
