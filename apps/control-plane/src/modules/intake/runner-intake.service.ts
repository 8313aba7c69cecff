import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import type { Msg, NatsConnection, Subscription } from '@nats-io/transport-node';
import {
  queueGroups,
  RunnerHeartbeatSchema,
  RunnerInstallReportSchema,
  subjects,
  type RunnerConnectionStatus,
} from '@paddock/contracts';
import { AppConfig } from '../../config/app-config';
import { Clock, NATS } from '../../infrastructure/tokens';
import { Metrics } from '../health/metrics';
import { IntakeRunners, type RunnerConnectionNotice } from './intake.port';


const keyOf = (organizationId: string, runnerId: string): string => `${organizationId}/${runnerId}`;

/**
 * Takes runner heartbeats and controller install reports from NATS (queue group: one replica
 * handles each message), and derives connection status:
 * - a heartbeat from a runner not known to be CONNECTED records CONNECTED;
 * - the sweeper marks a CONNECTED runner DISCONNECTED once its last heartbeat is older than
 *   `heartbeatStaleMs` (by the injected Clock), and heals the opposite case too, so a
 *   transition missed by a crashed replica is corrected within one sweep.
 * Invalid messages are counted, logged and dropped; they never stop the subscription.
 */
@Injectable()
export class RunnerIntakeService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly log = new Logger('RunnerIntake');
  private readonly subs: Subscription[] = [];
  private readonly loops: Promise<void>[] = [];
  /** Runners this replica believes CONNECTED; resynchronised from the read model every sweep. */
  private connected = new Set<string>();
  /** Transitions of one runner run one at a time, so the heartbeat path and the sweeper never both announce one change. */
  private readonly transitions = new Map<string, Promise<unknown>>();
  private sweepTimer: NodeJS.Timeout | undefined;
  private sweeping: Promise<void> | undefined;

  constructor(
    @Inject(NATS) private readonly nats: NatsConnection,
    private readonly runners: IntakeRunners,
    private readonly clock: Clock,
    private readonly config: AppConfig,
    private readonly metrics: Metrics,
  ) {}

  onApplicationBootstrap(): void {
    this.consume(subjects.allRunnerHeartbeats(), (m) => this.onHeartbeat(m));
    this.consume(subjects.allInstallReports(), (m) => this.onInstallReport(m));
    this.sweepTimer = setInterval(() => void this.sweep(), this.config.connectionSweepMs);
    this.sweepTimer.unref();
  }

  async onModuleDestroy(): Promise<void> {
    if (this.sweepTimer) clearInterval(this.sweepTimer);
    for (const s of this.subs) s.unsubscribe();
    await Promise.all(this.loops);
    await this.sweeping;
  }

  private consume(subject: string, handle: (m: Msg) => Promise<void>): void {
    const sub = this.nats.subscribe(subject, { queue: queueGroups.controlPlane });
    this.subs.push(sub);
    this.loops.push(
      (async () => {
        for await (const m of sub) {
          await handle(m).catch((e: unknown) => this.log.error(`handling ${m.subject} failed: ${String(e)}`));
        }
      })(),
    );
  }

  private parse<T>(m: Msg, kind: string, schema: { safeParse(v: unknown): { success: true; data: T } | { success: false; error: { issues: { path: PropertyKey[]; message: string }[] } } }): T | undefined {
    let raw: unknown;
    try {
      raw = m.json();
    } catch {
      this.metrics.natsMessages.inc({ kind, outcome: 'invalid' });
      this.log.warn(`dropped ${kind} on ${m.subject}: body is not JSON`);
      return undefined;
    }
    const r = schema.safeParse(raw);
    if (!r.success) {
      this.metrics.natsMessages.inc({ kind, outcome: 'invalid' });
      const why = r.error.issues.slice(0, 3).map((i) => `${i.path.map(String).join('.') || '(root)'}: ${i.message}`).join('; ');
      this.log.warn(`dropped ${kind} on ${m.subject}: ${why}`);
      return undefined;
    }
    return r.data;
  }

  /** A message must arrive on the subject its own payload names, so one runner cannot speak for another's subject. */
  private subjectMatches(m: Msg, kind: string, expected: () => string): boolean {
    let want: string | undefined;
    try {
      want = expected();
    } catch {
      want = undefined;
    }
    if (want === m.subject) return true;
    this.metrics.natsMessages.inc({ kind, outcome: 'invalid' });
    this.log.warn(`dropped ${kind} on ${m.subject}: its payload belongs on ${want ?? 'no valid subject'}`);
    return false;
  }

  private async onHeartbeat(m: Msg): Promise<void> {
    const hb = this.parse(m, 'heartbeat', RunnerHeartbeatSchema);
    if (!hb || !this.subjectMatches(m, 'heartbeat', () => subjects.runnerHeartbeat(hb.runnerId))) return;
    const at = this.clock.now();
    const known = await this.runners.touchHeartbeat(hb.organizationId, hb.runnerId, at, {
      revision: hb.revision,
      policyEtag: hb.policyEtag,
      usingDefaultPolicy: hb.usingDefaultPolicy,
      warmPoolStatus: hb.warmPoolStatus ?? [],
    });
    if (!known) {
      this.metrics.natsMessages.inc({ kind: 'heartbeat', outcome: 'unknown_runner' });
      this.log.debug?.(`ignored heartbeat of unknown runner ${keyOf(hb.organizationId, hb.runnerId)}`);
      return;
    }
    this.metrics.natsMessages.inc({ kind: 'heartbeat', outcome: 'ok' });
    const key = keyOf(hb.organizationId, hb.runnerId);
    if (!this.connected.has(key)) {
      await this.transition(hb.organizationId, hb.runnerId, 'RUNNER_CONNECTION_STATUS_CONNECTED', at);
      this.connected.add(key);
    }
  }

  private async onInstallReport(m: Msg): Promise<void> {
    const report = this.parse(m, 'install_report', RunnerInstallReportSchema);
    if (!report || !this.subjectMatches(m, 'install_report', () => subjects.installReport(report.clusterId))) return;
    try {
      await this.runners.applyInstallReport(report);
      this.metrics.natsMessages.inc({ kind: 'install_report', outcome: 'ok' });
    } catch (e) {
      this.metrics.natsMessages.inc({ kind: 'install_report', outcome: 'error' });
      this.log.warn(`install report for runner ${keyOf(report.organizationId, report.runnerId)} not applied: ${e instanceof Error ? e.message : String(e)}`);
    }
  }

  /** One sweep; overlapping timer ticks share the sweep in flight. Exposed for tests. */
  sweep(): Promise<void> {
    this.sweeping ??= this.sweepOnce()
      .catch((e: unknown) => this.log.error(`connection sweep failed: ${String(e)}`))
      .finally(() => {
        this.sweeping = undefined;
      });
    return this.sweeping;
  }

  private async sweepOnce(): Promise<void> {
    const now = this.clock.now();
    const staleBefore = now.getTime() - this.config.heartbeatStaleMs;
    const connected = new Set<string>();
    for (const s of await this.runners.listConnectionStates()) {
      const key = keyOf(s.organizationId, s.runnerId);
      const fresh = s.lastHeartbeatTime !== null && s.lastHeartbeatTime.getTime() > staleBefore;
      const isConnected = s.connectionStatus === 'RUNNER_CONNECTION_STATUS_CONNECTED';
      if (isConnected && !fresh) {
        await this.transition(s.organizationId, s.runnerId, 'RUNNER_CONNECTION_STATUS_DISCONNECTED', now);
      } else if (!isConnected && fresh) {
        await this.transition(s.organizationId, s.runnerId, 'RUNNER_CONNECTION_STATUS_CONNECTED', now);
        connected.add(key);
      } else if (isConnected) {
        connected.add(key);
      }
    }
    this.connected = connected;
  }

  private transition(organizationId: string, runnerId: string, status: RunnerConnectionStatus, at: Date): Promise<void> {
    const key = keyOf(organizationId, runnerId);
    const previous = this.transitions.get(key) ?? Promise.resolve();
    const next = previous.catch(() => undefined).then(() => this.transitionNow(organizationId, runnerId, status, at));
    this.transitions.set(key, next);
    void next.finally(() => {
      if (this.transitions.get(key) === next) this.transitions.delete(key);
    }).catch(() => undefined);
    return next;
  }

  private async transitionNow(organizationId: string, runnerId: string, status: RunnerConnectionStatus, at: Date): Promise<void> {
    if (!(await this.runners.recordConnection(organizationId, runnerId, status, at))) return;
    const notice: RunnerConnectionNotice = { organizationId, runnerId, connectionStatus: status, at: at.toISOString() };
    try {
      this.nats.publish(subjects.runnerConnection(runnerId), JSON.stringify(notice));
    } catch (e) {
      this.log.warn(`could not publish the connection change of ${keyOf(organizationId, runnerId)}: ${String(e)}`);
    }
    this.log.log(`runner ${keyOf(organizationId, runnerId)} is now ${status}`);
  }
}
