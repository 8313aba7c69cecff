import { PaddockError } from '@paddock/contracts';
import type { ExpectedVersion } from './types';

/**
 * The stream was not at the expected version when the append ran. Raised from the same
 * statement that would have moved the stream (zero rows updated), so it is never a stale read.
 */
export class ExpectedVersionConflictError extends PaddockError {
  readonly streamId: string;
  readonly expected: ExpectedVersion;
  /** Current stream position as seen right after the failed statement (0 = no stream). */
  readonly actual: number;
  constructor(streamId: string, expected: ExpectedVersion, actual: number) {
    super(
      'aborted',
      `stream ${streamId}: expectedVersion ${String(expected)} does not match the current version ${actual}`,
      {
        violations: [
          {
            field: 'expectedVersion',
            rule: 'must equal the current stream version',
            description: `stream ${streamId} is at version ${actual}`,
            requested: expected,
            limit: actual,
          },
        ],
        metadata: { streamId, expected: String(expected), actual: String(actual) },
      },
    );
    this.name = 'ExpectedVersionConflictError';
    this.streamId = streamId;
    this.expected = expected;
    this.actual = actual;
  }
}

/** The idempotency key was used before for a request with another hash. */
export class IdempotencyConflictError extends PaddockError {
  readonly key: string;
  constructor(key: string, storedHash: string | undefined, requestHash: string | undefined) {
    super(
      'failed_precondition',
      `idempotency.key ${key} was already used for a different request`,
      {
        violations: [
          {
            field: 'idempotency.key',
            rule: 'must be reused only with the same request',
            description: 'the stored request hash differs from this request hash',
            requested: requestHash,
            limit: storedHash,
          },
        ],
        metadata: { key },
      },
    );
    this.name = 'IdempotencyConflictError';
    this.key = key;
  }
}

/**
 * A processor instance tried to move a checkpoint it no longer owns, or from a position that is
 * no longer current. The instance is stale (another one took over): it must stop, never retry.
 */
export class CheckpointConflictError extends PaddockError {
  readonly processorId: string;
  readonly owner: string;
  constructor(processorId: string, owner: string) {
    super(
      'aborted',
      `processor ${processorId}: checkpoint was moved by another owner; instance ${owner} must stop`,
      {
        violations: [
          {
            field: 'checkpoint',
            rule: 'compare-and-set: owner and previous position must match',
            description: `instance ${owner} no longer owns processor ${processorId}`,
          },
        ],
        metadata: { processorId, owner },
      },
    );
    this.name = 'CheckpointConflictError';
    this.processorId = processorId;
    this.owner = owner;
  }
}

/** A caller error in append arguments (not a concurrency outcome). */
export function invalidAppend(field: string, rule: string, description: string): PaddockError {
  return new PaddockError('invalid_argument', `${field}: ${rule}`, {
    reason: 'PADDOCK_VALIDATION_FAILED',
    violations: [{ field, rule, description }],
  });
}
