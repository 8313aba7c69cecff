import { randomUUID } from 'node:crypto';
import { PaddockError, type FieldViolation, type SandboxSpec } from '@paddock/contracts';
import type { PlacementRecord } from '../db/database';
import type { GatewayMetrics } from '../observability/metrics';
import { violationsByRunner, type PlacementPlan } from '../placement/placement';
import type { PlacementService } from '../placement/placement.service';
import { RunnerTransportError, type RunnerClient } from '../runners/runner-client';
import type { Principal } from '../auth/token-authenticator';
import { capacityRefusal } from './capacity-refusal';
import { observationFromEvent, observationFromSandbox } from './observations';
import { CreatesInFlight, foldHeld } from './creates-in-flight';
import { SANDBOX_STATE_RANK, type SandboxStateEvent } from '@paddock/contracts';
import { parsePurgeRequest, purgeSandboxes, type PurgeResult } from './purge';
import { invalid, parseCreateRequest, type CreateRequest } from './request-parsing';
import type { SandboxRepository } from './sandbox.repository';
import { withServiceStatus } from '../services/service-status';
import { isTerminalRow, toView, type SandboxRow, type SandboxView } from './sandbox-view';
import { SandboxStateWaiters } from './state-waiters';
import { resolveSecrets, type ResolvedSecrets, type SecretResolver } from './secret-resolver';
import type { SourceGate } from '../runners/source-gate';

/** The error every lookup of a missing or foreign sandbox gives, byte for byte. */
export function sandboxNotFound(): PaddockError {
  return new PaddockError('not_found', 'sandbox not found', { reason: 'CWSANDBOX_SANDBOX_NOT_FOUND' });
}

export interface ExplainResult {
  candidates: string[];
  verdicts: PlacementPlan['verdicts'];
  /** Runners a create would try, in order; the first is where it would land. */
  order: string[];
  wouldPlaceOn: string | null;
}

export interface ListQuery {
  pageSize?: number;
  pageToken?: string;
  tags?: string[];
  state?: string;
  runnerIds?: string[];
  showTerminated?: boolean;
}

/** Longest single long poll of `:wait` (proxies drop longer idle requests). */
export const MAX_WAIT_SECONDS = 60;
/** How long polls learn about changes (see SandboxStateWaiters). */
export interface LongPolls {
  waiters: SandboxStateWaiters;
  /**
   * A long poll re-reads its row this often even unwoken: the state event may have gone to
   * another gateway of the queue group, which bounds how late such a change is seen here.
   */
  recheckMs: number;
}
/** States a sandbox leaves on its own while starting. */
const STARTING = new Set(['STATE_PENDING', 'STATE_CREATING']);
/** What `:wait?until=` waits for. */
const WAIT_UNTIL = new Map<string, (row: SandboxRow) => boolean>([
  ['started', (row) => !STARTING.has(row.state)],
  ['ended', (row) => isTerminalRow(row)],
]);

/** Retryable refusals: the next candidate may do better. */
const TRY_NEXT = new Set(['resource_exhausted', 'unavailable', 'deadline_exceeded', 'internal', 'failed_precondition', 'invalid_argument']);

/**
 * Create, read, list and delete. The database row is the system of record: it is written before
 * any runner hears of the sandbox, and runner news only ever moves it forward.
 */
export class SandboxLifecycleService {
  constructor(
    private readonly repo: SandboxRepository,
    private readonly placement: PlacementService,
    private readonly runners: RunnerClient,
    private readonly metrics: GatewayMetrics,
    private readonly newId: () => string = randomUUID,
    private readonly now: () => Date = () => new Date(),
    private readonly polls: LongPolls = { waiters: new SandboxStateWaiters(), recheckMs: 250 },
    /** `controlPlaneAccess.sourceIpAllowlist` of the owning runner; without it, no address is refused. */
    private readonly sources?: SourceGate,
    /** Where the gateway serves sandboxes' public services (their URLs in `status.services`); unset: no URLs. */
    private readonly serviceUrlBase?: () => string,
    /** Resolves `secretStores` mappings at create; without it, a spec that maps secrets is refused. */
    private readonly secrets?: SecretResolver,
    /** Holds the state events of creates in flight (shared with the state-event consumer). */
    private readonly creates: CreatesInFlight = new CreatesInFlight(),
  ) {}

  /** The resource as returned: the row's view, with the URLs of its public services. */
  private view(row: SandboxRow): SandboxView {
    return withServiceStatus(toView(row), row, this.serviceUrlBase?.());
  }

  /** Refuses (permission_denied) a caller whose address the owning runner's policy does not allow. */
  async checkSource(principal: Principal, runnerId: string): Promise<void> {
    await this.sources?.check(principal, runnerId);
  }

  async explain(principal: Principal, body: unknown): Promise<ExplainResult> {
    const { spec } = parseCreateRequest(body, undefined);
    const plan = await this.placement.plan(principal.organizationId, spec, callerOf(principal));
    return { candidates: plan.candidates, verdicts: plan.verdicts, order: plan.order, wouldPlaceOn: plan.order[0] ?? null };
  }

  async create(principal: Principal, body: unknown, queryRequestId?: string): Promise<{ view: SandboxView; created: boolean }> {
    return this.createParsed(principal, parseCreateRequest(body, queryRequestId));
  }

  /** `create` for a request its caller has parsed already (`parseCreateRequest`). */
  async createParsed(principal: Principal, req: CreateRequest): Promise<{ view: SandboxView; created: boolean }> {
    if (req.requestId) {
      const prior = await this.repo.findByRequestId(principal.organizationId, req.requestId);
      if (prior) return { view: this.view(this.sameRequest(prior, req.fingerprint)), created: false };
    }
    const plan = await this.placement.plan(principal.organizationId, req.spec, callerOf(principal), req.fingerprint);
    this.refuseUnplaceable(plan, req.spec);
    const secrets = await resolveSecrets(this.secrets, principal.organizationId, req.spec);
    const first = plan.order[0] as string;
    const placement: PlacementRecord = {
      decidedAt: this.now().toISOString(),
      candidates: plan.candidates,
      verdicts: plan.verdicts,
      attempts: [],
      winner: null,
    };
    const { row, created } = await this.repo.insertPending({
      id: this.newId(),
      organizationId: principal.organizationId,
      requestId: req.requestId,
      requestFingerprint: req.fingerprint,
      spec: req.spec,
      tags: req.spec.tags ?? [],
      runnerId: first,
      runnerGroupId: this.placement.runnerGroupOf(first),
      placement,
      now: this.now(),
    });
    if (!created) return { view: this.view(this.sameRequest(row, req.fingerprint)), created: false };
    return { view: await this.drivePlacement(row, plan, req.spec, principal.organizationId, secrets), created: true };
  }

  /**
   * Tries the plan's runners in order until one accepts; see the README for the outcomes. The
   * sandbox's state events that arrive meanwhile are held (CreatesInFlight) and applied when the
   * create is settled, the ones the accepted reply supersedes folded into its accept.
   */
  private async drivePlacement(row: SandboxRow, plan: PlacementPlan, spec: SandboxSpec, organizationId: string, secrets: ResolvedSecrets): Promise<SandboxView> {
    this.creates.begin(row.id);
    try {
      return await this.tryRunners(row, plan, spec, organizationId, secrets);
    } finally {
      await this.applyHeld(this.creates.end(row.id));
    }
  }

  /** Held events no reply superseded, through the same guarded write a state event takes. */
  private async applyHeld(events: SandboxStateEvent[]): Promise<void> {
    for (const e of events) {
      const applied = await this.repo.applyObservation(e.sandboxId, e.runnerId, observationFromEvent(e));
      this.metrics.stateEvents.inc({ result: applied ? 'applied' : 'stale' });
    }
  }

  private async tryRunners(row: SandboxRow, plan: PlacementPlan, spec: SandboxSpec, organizationId: string, secrets: ResolvedSecrets): Promise<SandboxView> {
    const placement = row.placement;
    let current = row.runner_id;
    let firstAmbiguous: string | null = null;
    const refusals: PaddockError[] = [];
    for (const runnerId of plan.order) {
      if (runnerId !== current) {
        const moved = await this.repo.reassign(row.id, current, runnerId, this.placement.runnerGroupOf(runnerId), placement, this.now());
        if (!moved) break; // someone else (the reconciler) owns the row now
        current = runnerId;
      }
      try {
        const created = await this.runners.create(runnerId, {
          sandboxId: row.id,
          organizationId,
          spec,
          labels: row.request_id ? { requestId: row.request_id } : {},
          ...secrets,
        });
        placement.attempts.push({ runnerId, outcome: 'accepted' });
        placement.winner = runnerId;
        // Published before the reply: folded into what the accept writes; another runner's after it.
        const { observation, others } = foldHeld(this.creates.end(row.id), runnerId, observationFromSandbox(created));
        const accepted = await this.repo.acceptPlacement(row.id, runnerId, placement, observation, this.now());
        const rank = (SANDBOX_STATE_RANK as Readonly<Record<string, number | undefined>>)[accepted?.state ?? ''];
        if (rank !== undefined) this.creates.noteRank(row.id, rank);
        await this.applyHeld(others);
        this.placement.notePlaced(runnerId);
        this.metrics.creates.inc({ outcome: 'accepted' });
        return this.view(accepted ?? (await this.repo.findAnyById(row.id)) ?? row);
      } catch (e) {
        const err = e instanceof PaddockError ? e : new PaddockError('internal', e instanceof Error ? e.message : String(e));
        placement.attempts.push({ runnerId, outcome: 'refused', code: err.code, message: err.message });
        if (e instanceof RunnerTransportError && e.ambiguous) firstAmbiguous ??= runnerId;
        else refusals.push(err);
        if (!TRY_NEXT.has(err.code)) break;
      }
    }
    await this.repo.recordPlacement(row.id, placement, this.now());
    if (firstAmbiguous) {
      // The create may have reached that runner: keep the row (PENDING) and let the reconciler
      // re-send the idempotent create; any copy on another runner gets reaped.
      if (current !== firstAmbiguous) await this.repo.reassign(row.id, current, firstAmbiguous, this.placement.runnerGroupOf(firstAmbiguous), placement, this.now());
      this.metrics.creates.inc({ outcome: 'accepted_uncertain' });
      return this.view((await this.repo.findAnyById(row.id)) ?? row);
    }
    // Every runner refused for certain: nothing was created anywhere, so the row goes too.
    await this.repo.deleteUnacknowledged(row.id);
    this.metrics.creates.inc({ outcome: 'refused' });
    throw await this.refusalError(refusals, plan, placement, organizationId);
  }

  private async refusalError(refusals: PaddockError[], plan: PlacementPlan, placement: PlacementRecord, organizationId: string): Promise<PaddockError> {
    const policyRefusals = refusals.filter((r) => r.code === 'failed_precondition' || r.code === 'invalid_argument');
    if (refusals.length && policyRefusals.length === refusals.length) {
      const violations: FieldViolation[] = [
        ...violationsByRunner(plan.verdicts),
        ...policyRefusals.flatMap((r) => r.violations.map((v) => ({ ...v, description: `runner ${r.metadata.runnerId ?? '?'}: ${v.description}` }))),
      ];
      return new PaddockError('failed_precondition', `no runner accepted the sandbox: ${policyRefusals.map((r) => r.message).join('; ')}`, {
        reason: 'CWSANDBOX_NO_SUITABLE_RUNNER',
        violations,
      });
    }
    if (refusals.some((r) => r.code === 'resource_exhausted')) {
      const full = placement.attempts.filter((a) => a.code === 'resource_exhausted').map((a) => ({ runnerId: a.runnerId, message: a.message ?? '' }));
      const holding = await this.repo.liveOnRunners(organizationId, full.map((f) => f.runnerId)).catch(() => []);
      return capacityRefusal(full, holding, this.now());
    }
    return new PaddockError('unavailable', 'no suitable runner is reachable; retry with backoff', { reason: 'CWSANDBOX_RUNNER_UNAVAILABLE' });
  }

  private refuseUnplaceable(plan: PlacementPlan, spec: SandboxSpec): void {
    if (plan.candidates.length === 0) {
      const narrowed = spec.runnerIds?.length ? ` among runnerIds [${spec.runnerIds.join(', ')}]` : '';
      throw new PaddockError('unavailable', `no runner of the organization is connected${narrowed}; retry with backoff`, {
        reason: 'CWSANDBOX_RUNNER_UNAVAILABLE',
      });
    }
    if (plan.order.length === 0) {
      const runners = plan.verdicts.map((v) => `${v.runnerId}: ${v.violations.map((x) => `${x.field} (${x.rule})`).join(', ')}`);
      throw new PaddockError('failed_precondition', `no runner's policy admits this sandbox — ${runners.join('; ')}`, {
        reason: 'CWSANDBOX_NO_SUITABLE_RUNNER',
        violations: violationsByRunner(plan.verdicts),
      });
    }
  }

  private sameRequest(row: SandboxRow, fingerprint: string): SandboxRow {
    if (row.request_fingerprint !== fingerprint) {
      throw invalid('requestId was already used with a different request', [
        { field: 'requestId', rule: 'idempotency_key_reuse', description: 'same requestId, different sandbox spec' },
      ]);
    }
    return row;
  }

  async get(principal: Principal, id: string): Promise<SandboxView> {
    return this.view(await this.load(principal, id));
  }

  /**
   * The long poll behind `GET /v1/sandboxes/{id}:wait`: the sandbox as soon as it has left
   * PENDING/CREATING (`until` = `started`: RUNNING, or ended) or has ended (`until` = `ended`:
   * COMPLETED or FAILED), else as it is when `timeoutSeconds` run out (not an error: the caller
   * looks at the state and may wait again). Missing and foreign ids are `not_found`, as for GET.
   */
  async waitFor(principal: Principal, id: string, timeoutSeconds: number, until: string = 'started'): Promise<SandboxView> {
    const settled = WAIT_UNTIL.get(until.toLowerCase());
    if (!settled) {
      const allowed = [...WAIT_UNTIL.keys()];
      throw invalid(`until must be one of ${allowed.join(', ')}`, [{ field: 'until', rule: 'enum', description: allowed.join(' | ') }]);
    }
    if (!Number.isFinite(timeoutSeconds) || timeoutSeconds < 0 || timeoutSeconds > MAX_WAIT_SECONDS) {
      throw invalid(`timeoutSeconds must be a number from 0 to ${MAX_WAIT_SECONDS}`, [
        { field: 'timeoutSeconds', rule: 'range', description: `0..${MAX_WAIT_SECONDS} seconds` },
      ]);
    }
    const deadline = Date.now() + timeoutSeconds * 1000;
    for (;;) {
      // Armed before the read: a change applied between the read and the wait still wakes us.
      const wake = this.polls.waiters.arm(id);
      try {
        const row = await this.load(principal, id);
        const left = deadline - Date.now();
        if (settled(row) || left <= 0) return this.view(row);
        await wake.within(Math.min(this.polls.recheckMs, left));
      } finally {
        wake.disarm();
      }
    }
  }

  /** The caller's row (foreign = not found), once its address may use the owning runner. */
  async load(principal: Principal, id: string): Promise<SandboxRow> {
    const row = await this.repo.findById(principal.organizationId, id);
    if (!row) throw sandboxNotFound();
    await this.checkSource(principal, row.runner_id);
    return row;
  }

  async list(principal: Principal, q: ListQuery): Promise<{ sandboxes: SandboxView[]; nextPageToken: string }> {
    const pageSize = Math.min(100, Math.max(1, q.pageSize && q.pageSize > 0 ? q.pageSize : 50));
    const rows = await this.repo.list(principal.organizationId, {
      tags: q.tags,
      states: q.state ? [normalizeState(q.state)] : undefined,
      runnerIds: q.runnerIds,
      showTerminated: q.showTerminated ?? false,
      pageSize,
      after: q.pageToken ? decodePageToken(q.pageToken) : undefined,
    });
    const page = rows.slice(0, pageSize);
    const last = page[page.length - 1];
    const nextPageToken = rows.length > pageSize && last ? encodePageToken(new Date(last.create_time), last.id) : '';
    return { sandboxes: page.map((r) => this.view(r)), nextPageToken };
  }

  markLogsDeleted(principal: Principal, id: string): Promise<void> {
    return this.repo.markLogsDeleted(principal.organizationId, id, this.now());
  }

  /** PurgeSandboxes: stops the organization's live sandboxes that carry every tag (or all of them). */
  async purge(principal: Principal, body: unknown): Promise<PurgeResult> {
    const req = parsePurgeRequest(body);
    const ids = await this.repo.liveIds(principal.organizationId, req.tags);
    // allowMissing: a sandbox that ended meanwhile is not a failure.
    return purgeSandboxes(ids, req.dryRun, (id) => this.delete(principal, id, 0, true));
  }

  async delete(principal: Principal, id: string, graceSeconds: number, allowMissing: boolean): Promise<{ sandbox?: SandboxView }> {
    if (!Number.isInteger(graceSeconds) || graceSeconds < 0) {
      throw invalid('gracePeriodSeconds must be a non-negative integer', [{ field: 'gracePeriodSeconds', rule: 'min', description: '>= 0' }]);
    }
    const grace = Math.min(300, graceSeconds);
    if (this.sources && principal.sourceIp !== undefined) {
      const existing = await this.repo.findById(principal.organizationId, id);
      if (existing) await this.checkSource(principal, existing.runner_id);
    }
    const row = await this.repo.markDeleteRequested(principal.organizationId, id, grace, this.now());
    if (!row) {
      if (allowMissing) return {};
      throw sandboxNotFound();
    }
    if (isTerminalRow(row)) return { sandbox: this.view(row) };
    try {
      const res = await this.runners.call(row.runner_id, 'delete', {
        sandboxId: row.id,
        organizationId: row.organization_id,
        gracePeriodSeconds: grace,
        allowMissing: true,
      });
      if (res.sandbox) await this.repo.applyObservation(row.id, row.runner_id, observationFromSandbox(res.sandbox));
      else if (!row.runner_acknowledged) await this.repo.markTerminal(row.id, 'STATE_COMPLETED', 'STOPPED_BY_USER', 'deleted before the runner created it', this.now(), row.runner_id);
    } catch (e) {
      // Accepted anyway: the reconciler re-sends the delete until the runner confirms.
      if (!(e instanceof RunnerTransportError)) throw e;
    }
    const after = (await this.repo.findAnyById(row.id)) ?? row;
    if (after.state === 'STATE_RUNNING' || after.state === 'STATE_PAUSED' || after.state === 'STATE_PENDING' || after.state === 'STATE_CREATING') {
      return { sandbox: { ...toView(after), status: { ...toView(after).status, state: 'STATE_TERMINATING' } } };
    }
    return { sandbox: this.view(after) };
  }
}

/** What runner selection needs to know about the caller besides its organization. */
function callerOf(principal: Principal): { sourceIp?: string } {
  return principal.sourceIp === undefined ? {} : { sourceIp: principal.sourceIp };
}

function normalizeState(s: string): string {
  const up = s.toUpperCase();
  return up.startsWith('STATE_') ? up : `STATE_${up}`;
}

export function encodePageToken(createTime: Date, id: string): string {
  return Buffer.from(JSON.stringify({ t: createTime.toISOString(), id })).toString('base64url');
}

export function decodePageToken(token: string): { createTime: Date; id: string } {
  try {
    const v = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as { t?: unknown; id?: unknown };
    if (typeof v.t === 'string' && typeof v.id === 'string' && !Number.isNaN(Date.parse(v.t))) return { createTime: new Date(v.t), id: v.id };
  } catch {
    // fall through
  }
  throw invalid('pageToken is not a token this server issued', [{ field: 'pageToken', rule: 'format', description: 'opaque token from nextPageToken' }]);
}
