import { createHash } from 'node:crypto';
import { PaddockError, SandboxSpecSchema, type FieldViolation, type SandboxSpec } from '@paddock/contracts';
import { validationError, zodViolations } from '@paddock/kit';

export function invalid(message: string, violations: FieldViolation[] = []): PaddockError {
  return new PaddockError('invalid_argument', message, { reason: 'CWSANDBOX_INVALID_REQUEST', violations });
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export interface CreateRequest {
  spec: SandboxSpec;
  requestId: string | null;
  fingerprint: string;
}

/**
 * Accepts the three create shapes: the product's `{ sandbox: { spec }, requestId }`, the short
 * `{ spec, tags?, requestId? }`, and a bare spec. `requestId` may also come as a query parameter.
 */
export function parseCreateRequest(body: unknown, queryRequestId: string | undefined): CreateRequest {
  if (!isObject(body)) throw invalid('request body must be a JSON object', [{ field: '(body)', rule: 'type', description: 'expected an object' }]);
  let rawSpec: unknown;
  let prefix: string;
  let extraTags: unknown;
  if (isObject(body.sandbox)) {
    rawSpec = body.sandbox.spec ?? {};
    prefix = 'sandbox.spec';
    extraTags = body.sandbox.tags;
  } else if (isObject(body.spec)) {
    rawSpec = body.spec;
    prefix = 'spec';
    extraTags = body.tags;
  } else {
    const { requestId: _r, ...rest } = body;
    rawSpec = rest;
    prefix = '';
  }
  const requestId = queryRequestId ?? (typeof body.requestId === 'string' ? body.requestId : undefined) ?? null;
  if (requestId !== null && (requestId.length === 0 || Buffer.byteLength(requestId, 'utf8') > 128)) {
    throw invalid('requestId must be 1 to 128 UTF-8 bytes', [{ field: 'requestId', rule: 'max_bytes', description: 'at most 128 UTF-8 bytes' }]);
  }
  const parsed = SandboxSpecSchema.safeParse(rawSpec);
  if (!parsed.success) throw validationError(zodViolations(parsed.error, { prefix }), 'CWSANDBOX_INVALID_REQUEST');
  const spec = parsed.data;
  if (extraTags !== undefined) {
    if (!Array.isArray(extraTags) || !extraTags.every((t) => typeof t === 'string')) {
      throw invalid('tags must be a list of strings', [{ field: 'tags', rule: 'type', description: 'expected string[]' }]);
    }
    spec.tags = [...new Set([...(spec.tags ?? []), ...extraTags])];
  }
  const runnerIds = spec.runnerIds ?? [];
  if (runnerIds.length > 100 || new Set(runnerIds).size !== runnerIds.length || runnerIds.some((r) => !r.trim())) {
    throw invalid('runnerIds must be unique, non-blank and at most 100', [
      { field: `${prefix ? `${prefix}.` : ''}runnerIds`, rule: 'unique_non_blank_max_100', description: 'entries must be unique, non-blank, at most 100' },
    ]);
  }
  const fingerprint = createHash('sha256').update(JSON.stringify(spec)).digest('hex');
  return { spec, requestId, fingerprint };
}
