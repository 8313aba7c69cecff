import { qualifiedResource, type ResourceType } from './resources';

/** A `meta/v1 Status` cause, as the API server fills `details.causes`. */
export interface StatusCause {
  reason?: string;
  message?: string;
  field?: string;
}

export interface StatusBody {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, never>;
  status: 'Failure' | 'Success';
  message?: string;
  reason?: string;
  details?: { name?: string; group?: string; kind?: string; uid?: string; causes?: StatusCause[]; retryAfterSeconds?: number };
  code: number;
}

/** An error the API server answers with a `Status` body; thrown anywhere below the HTTP layer. */
export class ApiError extends Error {
  constructor(readonly status: StatusBody) {
    super(status.message ?? status.reason ?? 'error');
  }
  get code(): number {
    return this.status.code;
  }
}

function failure(code: number, reason: string, message: string, details?: StatusBody['details']): ApiError {
  return new ApiError({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, ...(details ? { details } : {}), code });
}

const detailsFor = (r: ResourceType, name: string): NonNullable<StatusBody['details']> => ({
  name,
  ...(r.group ? { group: r.group } : {}),
  kind: r.plural,
});

export const notFound = (r: ResourceType, name: string): ApiError =>
  failure(404, 'NotFound', `${qualifiedResource(r)} "${name}" not found`, detailsFor(r, name));

export const alreadyExists = (r: ResourceType, name: string): ApiError =>
  failure(409, 'AlreadyExists', `${qualifiedResource(r)} "${name}" already exists`, detailsFor(r, name));

export const conflict = (r: ResourceType, name: string, why = 'the object has been modified; please apply your changes to the latest version and try again'): ApiError =>
  failure(409, 'Conflict', `Operation cannot be fulfilled on ${qualifiedResource(r)} "${name}": ${why}`, detailsFor(r, name));

export const applyConflict = (conflicts: { manager: string; apiVersion: string; field: string }[]): ApiError => {
  const lines = conflicts.map((c) => `conflict with "${c.manager}" using ${c.apiVersion}: ${c.field}`);
  const message =
    conflicts.length === 1
      ? `Apply failed with 1 conflict: ${lines[0] ?? ''}`
      : `Apply failed with ${conflicts.length} conflicts: ${lines.join('\n')}`;
  return failure(409, 'Conflict', message, {
    causes: conflicts.map((c) => ({ reason: 'FieldManagerConflict', message: `conflict with "${c.manager}" using ${c.apiVersion}`, field: c.field })),
  });
};

/**
 * An applied configuration the field manager cannot type, e.g. an associative list with two items
 * under one key. kube-apiserver returns structured-merge-diff's plain error here, which its
 * `ErrorToAPIStatus` turns into a 500 with no reason ("apiserver received an error that is not an
 * metav1.Status"): `failed to create typed patch object (ns/name; apps/v1, Kind=Deployment): <path>:
 * duplicate entries for key [name="X"]`, or `errors:` followed by one indented line per error.
 */
export const typedPatchError = (obj: { apiVersion: string; kind: string; namespace?: string; name?: string }, errors: string[]): ApiError => {
  const slash = obj.apiVersion.indexOf('/');
  const gvk = `${slash >= 0 ? obj.apiVersion.slice(0, slash) : ''}/${slash >= 0 ? obj.apiVersion.slice(slash + 1) : obj.apiVersion}, Kind=${obj.kind}`;
  const detail = errors.length === 1 ? (errors[0] ?? '') : ['errors:', ...errors.map((e) => `  ${e}`)].join('\n');
  return new ApiError({
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: `failed to create typed patch object (${obj.namespace ?? ''}/${obj.name ?? ''}; ${gvk}): ${detail}`,
    code: 500,
  });
};

export const invalid = (r: ResourceType, name: string, causes: StatusCause[]): ApiError =>
  failure(
    422,
    'Invalid',
    `${r.kind}${r.group ? `.${r.group}` : ''} "${name}" is invalid: ${causes.map((c) => `${c.field ?? ''}: ${c.message ?? ''}`).join(', ')}`,
    { name, ...(r.group ? { group: r.group } : {}), kind: r.kind, causes },
  );

export const forbidden = (r: ResourceType, name: string, why: string): ApiError =>
  failure(403, 'Forbidden', `${qualifiedResource(r)} "${name}" is forbidden: ${why}`, detailsFor(r, name));

export const badRequest = (message: string): ApiError => failure(400, 'BadRequest', message);

export const methodNotAllowed = (): ApiError => failure(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource');

export const unsupportedMediaType = (contentType: string): ApiError =>
  failure(415, 'UnsupportedMediaType', `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml, application/strategic-merge-patch+json (got ${contentType})`);

export const expired = (message: string): ApiError => failure(410, 'Expired', message);

export const unauthorized = (): ApiError => failure(401, 'Unauthorized', 'Unauthorized');

export const internalError = (message: string): ApiError => failure(500, 'InternalError', `Internal error occurred: ${message}`);

export const pathNotFound = (path: string): ApiError => failure(404, 'NotFound', `the server could not find the requested resource (${path})`, { causes: [{ reason: 'UnexpectedServerResponse', message: '404 page not found' }] });

export const successStatus = (r: ResourceType, name: string, uid: string): StatusBody => ({
  kind: 'Status',
  apiVersion: 'v1',
  metadata: {},
  status: 'Success',
  details: { ...detailsFor(r, name), uid },
  code: 200,
});

export const unprocessable = (message: string): ApiError => failure(422, 'Invalid', message);
