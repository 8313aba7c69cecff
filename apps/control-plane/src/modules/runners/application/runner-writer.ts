import { Injectable } from '@nestjs/common';
import type { Transaction } from 'kysely';
import {
  PaddockError,
  RUNNER_STREAM_TYPE,
  runnerStreamId,
  type RunnerEvent,
} from '@paddock/contracts';
import { EventStore, ExpectedVersionConflictError, IdempotencyConflictError, type EventMetadata, type RecordedEvent } from '@paddock/event-store';
import { decide, evolve, initialState, type RunnerState } from '../domain/runner.decider';
import type { RunnerCommand } from '../domain/runner.commands';
import { runnerRow } from '../projections/runner-row.projection';
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
}

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
  constructor(private readonly store: EventStore<RunnersTables>) {}

  private async project(trx: Transaction<RunnersTables>, state: RunnerState, version: number): Promise<void> {
    if (state.status === 'Absent') return;
    const row = runnerRow(state, version);
    if (!row) {
      await trx.deleteFrom('cp_runners').where('uid', '=', state.uid).execute();
      return;
    }
    const { uid: _uid, ...changes } = row;
    await trx
      .insertInto('cp_runners')
      .values(row)
      .onConflict((oc) => oc.column('uid').doUpdateSet(changes))
      .execute();
  }

  private toNew(events: RunnerEvent[], metadata: EventMetadata) {
    return events.map((e) => ({ type: e.type, data: e.data, metadata }));
  }

  /** Runs `command` against the runner stream `uid`, retrying on concurrent appends. */
  async execute(uid: string, command: RunnerCommand, metadata: EventMetadata, retries = DEFAULT_RETRIES): Promise<WriteOutcome> {
    const streamId = runnerStreamId(uid);
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.store.transaction(async (trx) => {
          const { state, version } = await this.store.aggregate(streamId, runnerFolder, { trx });
          const events = decide(command, state);
          if (events.length === 0) return { state, version, events };
          const appended = await this.store.append(streamId, RUNNER_STREAM_TYPE, this.toNew(events, metadata), { expectedVersion: version, trx });
          const next = events.reduce(evolve, state);
          await this.project(trx, next, appended.streamPosition);
          return { state: next, version: appended.streamPosition, events };
        });
      } catch (e) {
        if (e instanceof ExpectedVersionConflictError && attempt < retries) continue;
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
