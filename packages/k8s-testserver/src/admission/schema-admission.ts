import { invalid } from '../store/errors';
import type { AdmissionRequest } from '../store/store';
import { manifestProblems } from '../validate';

/** Rejects writes whose object fails the kind's OpenAPI schema, with a 422 naming each field. */
export function schemaAdmission(req: AdmissionRequest): void {
  if (req.subresource === 'status') return;
  const { status: _status, ...rest } = req.object;
  const { managedFields: _managed, ...metadata } = req.object.metadata;
  const problems = manifestProblems({ ...rest, metadata });
  if (problems.length === 0) return;
  throw invalid(
    req.resource,
    req.object.metadata.name ?? '',
    problems.map((p) => ({ reason: p.reason, message: p.message, field: p.field })),
  );
}
