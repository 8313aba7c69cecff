import { PaddockError, type SandboxSpec } from '@paddock/contracts';
import type { GatewayMetrics } from '../observability/metrics';
import { RunnerTransportError, type RunnerClient } from '../runners/runner-client';
import type { RunnerRegistry } from '../runners/runner-registry';
import { observationFromSandbox } from './observations';
import type { SandboxRepository } from './sandbox.repository';
import type { SandboxRow } from './sandbox-view';
import { resolveSecrets, type SecretResolver } from './secret-resolver';

export interface ReconcilerOptions {
  intervalMs: number;
  stuckAfterMs: number;
  runnerLostGraceMs: number;
  /** Create re-sends before a sandbox no runner will take is failed. */
  maxCreateAttempts?: number;
}

async function mapLimit<T>(items: T[], limit: number, fn: (t: T) => Promise<void>): Promise<void> {
  let i = 0;
  const workers = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (i < items.length) await fn(items[i++] as T);
  });
  await Promise.all(workers);
}

/**
 * Level-based repair loop. Each pass:
 * 1. sandboxes of a runner silent past the grace period → FAILED `RUNNER_LOST`;
 * 2. every non-terminal row untouched for `stuckAfterMs` is re-driven: `get` from its runner,
 *    an idempotent `create` when the runner never heard of it, a `delete` when one was asked;
 * 3. every live runner's inventory (`list`) is diffed against the rows: states the gateway missed
 *    are applied, and whatever the runner runs that no live row assigns to it is deleted (reaped).
 */
export class Reconciler {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private stopped = false;

  constructor(
    private readonly repo: SandboxRepository,
    private readonly runners: RunnerClient,
    private readonly registry: RunnerRegistry,
    private readonly metrics: GatewayMetrics,
    private readonly opts: ReconcilerOptions,
    private readonly onError: (e: unknown) => void,
    private readonly now: () => Date = () => new Date(),
    /** Re-resolves a re-sent create's secrets (their values are never stored with the row). */
    private readonly secrets?: SecretResolver,
  ) {}

  start(): void {
    const loop = (): void => {
      if (this.stopped) return;
      this.timer = setTimeout(() => {
        this.running = this.tick().catch(this.onError).finally(loop);
      }, this.opts.intervalMs);
    };
    loop();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }

  /** One full pass (also called directly by tests). */
  async tick(): Promise<void> {
    await this.failLostRunners();
    const cutoff = new Date(this.now().getTime() - this.opts.stuckAfterMs);
    const stuck = await this.repo.stuck(cutoff, 1000);
    await mapLimit(stuck, 8, (row) => this.redrive(row).catch((e) => this.note('error', e)));
    await mapLimit(this.registry.freshRunners(), 4, (r) =>
      this.diffInventory(r.heartbeat.runnerId, r.heartbeat.organizationId).catch((e) => this.note('error', e)),
    );
  }

  private note(action: string, e?: unknown): void {
    this.metrics.reconcileActions.inc({ action });
    if (e !== undefined && !(e instanceof RunnerTransportError)) this.onError(e);
  }

  private async failLostRunners(): Promise<void> {
    for (const runnerId of await this.repo.runnersWithActiveSandboxes()) {
      if (!this.registry.isLost(runnerId, this.opts.runnerLostGraceMs)) continue;
      for (const row of await this.repo.activeOnRunner(runnerId)) {
        if (await this.repo.markTerminal(row.id, 'STATE_FAILED', 'RUNNER_LOST', `runner ${runnerId} stopped heartbeating`, this.now(), runnerId)) {
          this.note('runner_lost');
        }
      }
    }
  }

  private async redrive(row: SandboxRow): Promise<void> {
    const ref = { sandboxId: row.id, organizationId: row.organization_id };
    if (row.delete_requested_at) {
      const res = await this.runners.call(row.runner_id, 'delete', { ...ref, gracePeriodSeconds: row.delete_grace_seconds, allowMissing: true });
      this.note('redrive_delete');
      if (res.sandbox) await this.repo.applyObservation(row.id, row.runner_id, observationFromSandbox(res.sandbox));
      else await this.repo.markTerminal(row.id, 'STATE_COMPLETED', 'STOPPED_BY_USER', 'stopped before the runner started it', this.now(), row.runner_id);
      await this.repo.touch(row.id, this.now());
      return;
    }
    try {
      const got = await this.runners.call(row.runner_id, 'get', ref);
      this.note('refresh');
      await this.repo.applyObservation(row.id, row.runner_id, observationFromSandbox(got.sandbox));
      await this.repo.touch(row.id, this.now());
      return;
    } catch (e) {
      if (!(e instanceof PaddockError) || e.code !== 'not_found') throw e;
    }
    if (row.runner_acknowledged) {
      await this.repo.markTerminal(row.id, 'STATE_FAILED', 'RUNNER_LOST', `runner ${row.runner_id} no longer knows the sandbox`, this.now(), row.runner_id);
      this.note('runner_forgot');
      return;
    }
    await this.redriveCreate(row);
  }

  private async redriveCreate(row: SandboxRow): Promise<void> {
    await this.repo.noteCreateAttempt(row.id, this.now());
    this.note('redrive_create');
    try {
      const spec = row.spec as SandboxSpec;
      const secrets = await resolveSecrets(this.secrets, row.organization_id, spec);
      const res = await this.runners.call(row.runner_id, 'create', {
        sandboxId: row.id,
        organizationId: row.organization_id,
        spec,
        labels: row.request_id ? { requestId: row.request_id } : {},
        ...secrets,
      });
      await this.repo.applyObservation(row.id, row.runner_id, observationFromSandbox(res.sandbox));
    } catch (e) {
      if (e instanceof RunnerTransportError) return;
      if (!(e instanceof PaddockError)) throw e;
      const definitive = e.code === 'failed_precondition' || e.code === 'invalid_argument';
      if (definitive || row.create_attempts + 1 >= (this.opts.maxCreateAttempts ?? 20)) {
        await this.repo.markTerminal(row.id, 'STATE_FAILED', definitive ? 'POLICY_REJECTED' : 'FAILED_TO_START', e.message, this.now(), row.runner_id);
      }
    }
  }

  private async diffInventory(runnerId: string, organizationId: string): Promise<void> {
    const { sandboxes } = await this.runners.call(runnerId, 'list', { organizationId, showTerminated: false });
    const owned = await this.repo.ownedActive(runnerId, sandboxes.map((s) => s.sandboxId));
    for (const sb of sandboxes) {
      if (owned.has(sb.sandboxId)) {
        await this.repo.applyObservation(sb.sandboxId, runnerId, observationFromSandbox(sb));
        continue;
      }
      // Unknown to the database, terminal there, or assigned to another runner: fail closed.
      await this.runners.call(runnerId, 'delete', { sandboxId: sb.sandboxId, organizationId: sb.organizationId, gracePeriodSeconds: 0, allowMissing: true });
      this.note('reap_unknown');
    }
    // Live rows the runner no longer lists as live: a terminal event was missed; ask for it.
    const listed = new Set(sandboxes.map((s) => s.sandboxId));
    const cutoff = this.now().getTime() - this.opts.stuckAfterMs;
    const missing = (await this.repo.activeOnRunner(runnerId)).filter(
      (r) => r.runner_acknowledged && !listed.has(r.id) && new Date(r.updated_at).getTime() < cutoff,
    );
    await mapLimit(missing, 4, (row) => this.redrive(row));
  }
}
