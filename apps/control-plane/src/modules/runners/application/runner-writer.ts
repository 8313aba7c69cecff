import { Injectable } from '@nestjs/common';
import { sql, type Transaction } from 'kysely';
import {
  PaddockError,
  RUNNER_STREAM_TYPE,
  runnerStreamId,
  type RunnerEvent,
} from '@paddock/contracts';
import { EventStore, ExpectedVersionConflictError, IdempotencyConflictError, type EventMetadata, type RecordedEvent } from '@paddock/event-store';
import { decide, evolve, initialState, type RunnerState } from '../domain/runner.decider';
import type { RunnerCommand } from '../domain/runner.commands';
import { LATEST_REVISION, RunnerReadRepository, type RunnerRowWithLatest } from '../projections/runner-read.repository';
import { runnerRow, runnerStateOfRow } from '../projections/runner-row.projection';
import type { RunnersTables } from '../runners.tables';

/** The log only ever holds events this module wrote, so the stored shape is the domain shape. */
export const asRunnerEvent = (e: RecordedEvent): RunnerEvent => ({ type: e.type, data: e.data }) as RunnerEvent;

export const runnerFolder = {
  initialState,
  evolve: (state: RunnerState, e: RecordedEvent): RunnerState => evolve(state, asRunnerEvent(e)),
};

export interface WriteOutcome {
  state: RunnerState;
  version: number;
  events: RunnerEvent[];
  /** The runner's `cp_runners` row after the write (with its channel's latest revision); absent once removed. */
  row?: RunnerRowWithLatest;
}

/** Builds the command from the locked row (so checks against the row run in the transaction). */
export type CommandOfRow = (row: RunnerRowWithLatest | undefined) => RunnerCommand;

const UNIQUE_VIOLATION = '23505';
/** Optimistic retries on a version conflict; each retry re-reads and re-decides. */
const DEFAULT_RETRIES = 8;

function pgError(e: unknown): { code?: string; constraint?: string } {
  return typeof e === 'object' && e !== null ? (e) : {};
}

/**
 * load → decide → append → project, in ONE transaction: the read model `cp_runners` is updated
 * with the append (read-your-writes), and its unique indexes refuse a duplicate runner id or a
 * second runner on a cluster by rolling the append back with it.
 */
@Injectable()
export class RunnerWriter {
  constructor(
    private readonly store: EventStore<RunnersTables>,
    private readonly repo: RunnerReadRepository,
  ) {}

  /**
   * Upserts (or deletes) the row of `state`, RETURNING what a GET would read (the channel's latest
   * release is computed there too, since the write may have changed the channel), so the caller
   * renders its response without another read.
   */
  private async project(trx: Transaction<RunnersTables>, state: RunnerState, version: number): Promise<RunnerRowWithLatest | undefined> {
    if (state.status === 'Absent') return undefined;
    const row = runnerRow(state, version);
    if (!row) {
      await trx.deleteFrom('cp_runners').where('uid', '=', state.uid).execute();
      return undefined;
    }
    const { uid: _uid, ...changes } = row;
    const written = await trx
      .insertInto('cp_runners')
      .values(row)
      .onConflict((oc) => oc.column('uid').doUpdateSet(changes))
      .returningAll()
      .returning([sql<string>`create_time::text`.as('create_time_text'), LATEST_REVISION.as('latest_revision')])
      .executeTakeFirstOrThrow();
    return written;
  }

  private toNew(events: RunnerEvent[], metadata: EventMetadata) {
    return events.map((e) => ({ type: e.type, data: e.data, metadata }));
  }

  /** Runs `command` against the runner stream `uid`, retrying on concurrent appends. */
  async execute(uid: string, command: RunnerCommand, metadata: EventMetadata, retries = DEFAULT_RETRIES): Promise<WriteOutcome> {
    return this.run(uid, (trx) => this.repo.findByUidWithLatest(uid, { trx, forUpdate: true }), () => command, metadata, retries);
  }

  /**
   * Runs the command built from the runner named `ref` (runner id or uid) in `organizationId`;
   * `undefined` when the organization has no such runner (the caller answers `not_found`).
   */
  async executeByRef(
    organizationId: string,
    ref: string,
    commandOf: CommandOfRow,
    metadata: EventMetadata,
    retries = DEFAULT_RETRIES,
  ): Promise<WriteOutcome | undefined> {
    let missing = false;
    const outcome = await this.run(
      undefined,
      async (trx) => {
        const row = await this.repo.findByRefWithLatest(organizationId, ref, { trx, forUpdate: true });
        missing = row === undefined;
        return row;
      },
      commandOf,
      metadata,
      retries,
    );
    return missing ? undefined : outcome;
  }

  /**
   * One transaction: lock the projection row (`SELECT … FOR UPDATE`, with the channel's latest
   * release in the same query), decide from the state it holds, append with its `stream_version`
   * as the expected version (checked in the append statement), upsert the evolved row RETURNING it.
   * BEGIN + 3 statements + COMMIT, whatever the stream's length.
   *
   * Every writer locks the row before the stream (`es_streams` row, taken by the append), so two
   * writers never wait on each other in opposite orders. Should the row ever disagree with the
   * stream (the append's version check refuses it), the retry folds the stream instead, still
   * under the row lock. Without a row (never created, or removed) the stream is folded as before.
   */
  private async run(
    uid: string | undefined,
    lock: (trx: Transaction<RunnersTables>) => Promise<RunnerRowWithLatest | undefined>,
    commandOf: CommandOfRow,
    metadata: EventMetadata,
    retries: number,
  ): Promise<WriteOutcome> {
    let trustRow = true;
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.store.transaction(async (trx): Promise<WriteOutcome> => {
          const locked = await lock(trx);
          const streamUid = locked?.uid ?? uid;
          if (streamUid === undefined) return { state: initialState(), version: 0, events: [] };
          const streamId = runnerStreamId(streamUid);
          const { state, version } =
            locked && trustRow
              ? { state: runnerStateOfRow(locked) as RunnerState, version: locked.stream_version }
              : await this.store.aggregate(streamId, runnerFolder, { trx });
          const command = commandOf(locked);
          const events = decide(command, state);
          if (events.length === 0) return { state, version, events, ...(locked ? { row: locked } : {}) };
          const appended = await this.store.append(streamId, RUNNER_STREAM_TYPE, this.toNew(events, metadata), { expectedVersion: version, trx });
          const next = events.reduce(evolve, state);
          const row = await this.project(trx, next, appended.streamPosition);
          return { state: next, version: appended.streamPosition, events, ...(row ? { row } : {}) };
        });
      } catch (e) {
        if (e instanceof ExpectedVersionConflictError && attempt < retries) {
          trustRow = false;
          continue;
        }
        throw e;
      }
    }
  }

  /**
   * Creates a runner stream. With an idempotency key, a retry of the same request returns the
   * first runner's uid (`replayed`); the same key with another request is `already_exists`.
   */
  async create(
    uid: string,
    command: Extract<RunnerCommand, { type: 'CreateRunner' }>,
    metadata: EventMetadata,
    idempotency: { key: string; requestHash: string } | undefined,
  ): Promise<{ uid: string; replayed: boolean }> {
    const streamId = runnerStreamId(uid);
    try {
      return await this.store.transaction(async (trx) => {
        const state = initialState();
        const events = decide(command, state);
        const appended = await this.store.append(streamId, RUNNER_STREAM_TYPE, this.toNew(events, metadata), {
          expectedVersion: 'no_stream',
          trx,
          ...(idempotency ? { idempotency: { ...idempotency, result: { uid } } } : {}),
        });
        if (appended.replayed) {
          const first = (appended.result as { uid?: string } | undefined)?.uid;
          if (!first) throw new PaddockError('internal', 'idempotent create replay carries no runner uid');
          return { uid: first, replayed: true };
        }
        await this.project(trx, events.reduce(evolve, state), appended.streamPosition);
        return { uid, replayed: false };
      });
    } catch (e) {
      if (e instanceof IdempotencyConflictError) {
        throw new PaddockError('already_exists', 'request_id was already used for a different create request; use a new request_id for a different configuration', {
          reason: 'PADDOCK_VALIDATION_FAILED',
          violations: [{ field: 'request_id', rule: 'reuse_only_with_identical_request', description: 'the request_id is bound to another request body' }],
        });
      }
      const pg = pgError(e);
      if (pg.code === UNIQUE_VIOLATION && pg.constraint === 'cp_runners_org_cluster_uq') {
        throw new PaddockError('already_exists', 'a managed runner already exists for this cluster', {
          reason: 'PADDOCK_RUNNER_EXISTS_FOR_CLUSTER',
          violations: [{ field: 'runner.identity.cluster_id', rule: 'one_runner_per_cluster', description: 'a managed runner already exists for this cluster' }],
        });
      }
      if (pg.code === UNIQUE_VIOLATION && pg.constraint === 'cp_runners_org_runner_id_uq') {
        throw new PaddockError('already_exists', `managed runner ${command.data.runnerId} already exists in this organization`, {
          reason: 'PADDOCK_RUNNER_ID_TAKEN',
          violations: [{ field: 'runner.identity.runner_id', rule: 'unique_in_organization', description: `runner id ${command.data.runnerId} is taken` }],
        });
      }
      throw e;
    }
  }

  readStream(uid: string): Promise<RecordedEvent[]> {
    return this.store.readStream(runnerStreamId(uid));
  }
}
