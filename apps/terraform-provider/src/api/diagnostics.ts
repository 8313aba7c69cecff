import { error, type AttributePath, type Diagnostic } from '../framework/diagnostics';
import type { Attributes } from '../framework/schema';
import { attributePathOf, splitApiPath } from '../framework/wire';
import { ApiError } from './client';

/**
 * What a failed API call means to the person running Terraform: which setting to check, and
 * whether anything was changed. Field violations of a refused request become one diagnostic
 * each, on the attribute they name.
 */

/** `runner.identity.zone` → `zone`; `runner.spec.x` → `spec.x`; `policy.x` stays. */
function violationPath(attributes: Attributes, field: string): AttributePath | undefined {
  const segments = splitApiPath(field);
  if (segments[0] === 'runner') segments.shift();
  if (segments[0] === 'identity') segments.shift();
  const path = attributePathOf(attributes, segments);
  return path.length > 0 ? path : undefined;
}

const requestIdNote = (e: ApiError): string => (e.details.requestId ? ` (request id ${e.details.requestId})` : '');

/**
 * @param doing what the provider was doing, e.g. `creating managed runner "prod"`
 * @param attributes the schema the violation paths are resolved against
 */
export function apiErrorDiagnostics(e: unknown, doing: string, endpoint: string, attributes: Attributes): Diagnostic[] {
  if (!(e instanceof ApiError)) return [error('Provider error', `${doing}: ${e instanceof Error ? e.message : String(e)}`)];
  switch (e.kind) {
    case 'unreachable':
      return [
        error(
          'Cannot reach the CoreWeave API',
          `${doing}: the API at ${endpoint} did not answer (${e.message}). Check the provider's endpoint (the provider argument endpoint, or COREWEAVE_API_ENDPOINT, which takes precedence) and that this machine can reach it. Nothing was changed.`,
        ),
      ];
    case 'timeout':
      return [
        error(
          'The CoreWeave API did not answer in time',
          `${doing}: ${e.message} (http_timeout, or COREWEAVE_HTTP_TIMEOUT). The request may or may not have been applied: run terraform plan to see the runner as it is now.`,
        ),
      ];
    case 'bad_response':
      return [error('Unexpected answer from the CoreWeave API', `${doing}: ${e.message}${requestIdNote(e)}. Check that the endpoint ${endpoint} is a CoreWeave Sandbox control plane.`)];
    case 'http':
      break;
  }
  if (e.details.code === 'unauthenticated') {
    return [error('The CoreWeave API refused the token', `${doing}: ${e.message}${requestIdNote(e)}. Check the token in COREWEAVE_API_TOKEN (or the provider argument token): it must be a valid API access token.`)];
  }
  if (e.details.code === 'permission_denied') {
    return [error('Permission denied', `${doing}: ${e.message}${requestIdNote(e)}. Managing runners needs a token with SANDBOX_ADMIN.`)];
  }
  const violations = e.details.violations ?? [];
  if (violations.length > 0) {
    return violations.map((v) => {
      const path = violationPath(attributes, v.field);
      return error('The CoreWeave API refused the request', `${doing}: ${v.description}${requestIdNote(e)}. Nothing was changed.`, path);
    });
  }
  const code = e.details.code ? `${e.details.code}: ` : '';
  return [error('The CoreWeave API refused the request', `${doing}: ${code}${e.message} (HTTP ${e.details.status ?? '?'})${requestIdNote(e)}.`)];
}
