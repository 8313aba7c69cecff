import { CoordinationV1Api, type KubeConfig, type V1Lease } from '@kubernetes/client-node';

export interface LeaseOptions {
  namespace: string;
  name: string;
  identity: string;
  leaseDurationSeconds?: number;
  renewEveryMs?: number;
  now?: () => Date;
}

const code = (e: unknown): number | undefined => {
  const c = (e as { code?: unknown }).code;
  return typeof c === 'number' ? c : undefined;
};

/**
 * Leader election on a coordination.k8s.io Lease. Every write carries the lease's resourceVersion,
 * so two candidates can never both win a term; `leaseTransitions` is the term number, used as the
 * fencing token on install reports (the control plane drops reports from an older term). A leader
 * that fails to renew before its lease expires steps down at once (`onLost`).
 */
export class LeaseElector {
  private readonly api: CoordinationV1Api;
  private timer: NodeJS.Timeout | undefined;
  private leading = false;
  private term = 0;
  private lastRenew = 0;
  private stopped = false;

  constructor(
    kc: KubeConfig,
    private readonly opts: LeaseOptions,
    private readonly hooks: { onLeading: (term: number) => void; onLost: () => void },
  ) {
    this.api = kc.makeApiClient(CoordinationV1Api);
  }

  /**
   * Leading AND the last successful renewal is recent enough that no one else can have taken the
   * lease: a process that was paused (SIGSTOP, GC, VM freeze) past its renew deadline is no longer
   * a leader the moment it resumes, before its next election round has even run.
   */
  get isLeader(): boolean {
    return this.leading && this.now().getTime() - this.lastRenew < this.renewDeadlineMs();
  }

  private renewDeadlineMs(): number {
    return (this.opts.leaseDurationSeconds ?? 15) * 1000 * 0.8;
  }

  get fencingToken(): number {
    return this.term;
  }

  private now(): Date {
    return this.opts.now?.() ?? new Date();
  }

  /** One election round; returns whether this instance leads afterwards. */
  async tryAcquireOrRenew(): Promise<boolean> {
    const duration = this.opts.leaseDurationSeconds ?? 15;
    const now = this.now();
    let lease: V1Lease | undefined;
    try {
      lease = await this.api.readNamespacedLease({ name: this.opts.name, namespace: this.opts.namespace });
    } catch (e) {
      if (code(e) !== 404) throw e;
    }
    const spec = { holderIdentity: this.opts.identity, leaseDurationSeconds: duration, renewTime: now };
    try {
      if (!lease) {
        await this.api.createNamespacedLease({
          namespace: this.opts.namespace,
          body: { metadata: { name: this.opts.name, namespace: this.opts.namespace }, spec: { ...spec, acquireTime: now, leaseTransitions: 1 } },
        });
        return this.became(1, now);
      }
      const holder = lease.spec?.holderIdentity;
      const renewed = lease.spec?.renewTime ? new Date(lease.spec.renewTime).getTime() : 0;
      const expired = renewed + (lease.spec?.leaseDurationSeconds ?? duration) * 1000 < now.getTime();
      if (holder !== this.opts.identity && !expired) return this.lost();
      const transitions = (lease.spec?.leaseTransitions ?? 0) + (holder === this.opts.identity ? 0 : 1);
      await this.api.replaceNamespacedLease({
        name: this.opts.name,
        namespace: this.opts.namespace,
        body: {
          metadata: { name: this.opts.name, namespace: this.opts.namespace, resourceVersion: lease.metadata?.resourceVersion },
          spec: { ...spec, acquireTime: holder === this.opts.identity ? lease.spec?.acquireTime : (now), leaseTransitions: transitions },
        },
      });
      return this.became(transitions, now);
    } catch (e) {
      // 409: the lease changed between our read and write. If someone else took it, the next
      // round sees them as holder and steps down; until then the renew deadline still guards us.
      if (code(e) === 409) return this.isLeader;
      throw e;
    }
  }

  /** `renewedAt` is when the round started: the lease is ours from the renewTime we wrote, not from when the answer arrived. */
  private became(term: number, renewedAt: Date): boolean {
    // A round that was in flight when stop() ran must not resurrect leadership.
    if (this.stopped) return false;
    this.lastRenew = renewedAt.getTime();
    if (!this.leading || this.term !== term) {
      this.leading = true;
      this.term = term;
      this.hooks.onLeading(term);
    }
    return true;
  }

  private lost(): boolean {
    if (this.leading) {
      this.leading = false;
      this.hooks.onLost();
    }
    return false;
  }

  start(): void {
    let inFlight = false;
    const tick = async (): Promise<void> => {
      // Rounds never overlap: two rounds of one instance would race each other into a 409.
      if (inFlight || this.stopped) return;
      inFlight = true;
      let timer: NodeJS.Timeout | undefined;
      try {
        // A round that hangs (lost connection) must not block every later round forever.
        await Promise.race([
          this.tryAcquireOrRenew(),
          new Promise<never>((_, reject) => {
            timer = setTimeout(() => reject(new Error('lease round timed out')), this.renewDeadlineMs());
          }),
        ]);
      } catch {
        // Cannot reach the API server: keep leading only while the lease is surely still ours.
        if (this.leading && this.now().getTime() - this.lastRenew > this.renewDeadlineMs()) this.lost();
      } finally {
        clearTimeout(timer);
        inFlight = false;
      }
    };
    void tick();
    this.timer = setInterval(() => void tick(), this.opts.renewEveryMs ?? 2000);
    this.timer.unref();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.lost();
  }
}
