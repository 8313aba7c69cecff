import { z } from 'zod';
import type { FieldViolation } from './errors';

/**
 * A sandbox's `services[]`: ports and who may reach them. The runner checks them at create (what
 * its backend cannot serve is refused, naming the field); the gateway reads the same shape from
 * the stored spec to serve `VISIBILITY_PUBLIC` HTTP endpoints and to report their URLs.
 */
export const SERVICE_VISIBILITIES = ['VISIBILITY_UNSPECIFIED', 'VISIBILITY_PUBLIC', 'VISIBILITY_PRIVATE', 'VISIBILITY_CUSTOM'] as const;
export const ENDPOINT_KINDS = ['ENDPOINT_KIND_UNSPECIFIED', 'ENDPOINT_KIND_HTTPS', 'ENDPOINT_KIND_TLS_PASSTHROUGH'] as const;
export const ENDPOINT_AUTHS = ['ENDPOINT_AUTH_UNSPECIFIED', 'ENDPOINT_AUTH_OPEN', 'ENDPOINT_AUTH_TOKEN', 'ENDPOINT_AUTH_SHARE_TOKEN'] as const;

export const EndpointSpecSchema = z.strictObject({
  kind: z.enum(ENDPOINT_KINDS).optional(),
  auth: z.enum(ENDPOINT_AUTHS).optional(),
  requestTimeoutSeconds: z.number().int().min(15).max(900).optional(),
});

export const ServiceSpecSchema = z.strictObject({
  port: z.number().int().min(1).max(65_535),
  name: z.string().optional(),
  protocol: z.enum(['SERVICE_PROTOCOL_UNSPECIFIED', 'TCP', 'UDP', 'SCTP']).optional(),
  visibility: z.enum(SERVICE_VISIBILITIES).optional(),
  endpoint: EndpointSpecSchema.optional(),
});
export type ServiceSpec = z.infer<typeof ServiceSpecSchema>;

/** Requests through a service endpoint wait this long for the sandbox's answer unless the service says otherwise. */
export const DEFAULT_ENDPOINT_TIMEOUT_SECONDS = 15;

/** A service the gateway serves over HTTP: public, with an HTTPS (or unset) endpoint. */
export interface HttpEndpoint {
  port: number;
  name?: string;
  /** `ENDPOINT_AUTH_OPEN` (anyone) or `ENDPOINT_AUTH_TOKEN` (an API token of the sandbox's organization). */
  auth: 'ENDPOINT_AUTH_OPEN' | 'ENDPOINT_AUTH_TOKEN';
  requestTimeoutSeconds: number;
}

/**
 * Checks `services[]` against what Paddock serves: TCP services, each port once; reachability
 * only `VISIBILITY_UNSPECIFIED` (inside the sandbox) or `VISIBILITY_PUBLIC` through an HTTP
 * endpoint of the gateway; endpoint auth open or by API token. Everything else is a violation
 * naming the field, never served as something else.
 */
export function serviceViolations(raw: unknown): FieldViolation[] {
  if (raw === undefined) return [];
  const parsed = z.array(ServiceSpecSchema).safeParse(raw);
  if (!parsed.success) {
    return parsed.error.issues.map((i) => ({ field: ['services', ...i.path.map(String)].join('.').replace(/\.(\d+)/g, '[$1]'), rule: i.code, description: i.message }));
  }
  const out: FieldViolation[] = [];
  const seen = new Set<number>();
  for (const [i, s] of parsed.data.entries()) {
    const at = `services[${i}]`;
    if (seen.has(s.port)) out.push({ field: `${at}.port`, rule: 'unique', description: `port ${s.port} is declared twice` });
    seen.add(s.port);
    if (s.protocol && s.protocol !== 'TCP' && s.protocol !== 'SERVICE_PROTOCOL_UNSPECIFIED') {
      out.push({ field: `${at}.protocol`, rule: 'supported', description: 'only TCP services are served' });
    }
    const visibility = s.visibility ?? 'VISIBILITY_UNSPECIFIED';
    if (visibility === 'VISIBILITY_PRIVATE' || visibility === 'VISIBILITY_CUSTOM') {
      out.push({ field: `${at}.visibility`, rule: 'supported', description: `${visibility} is not served: use VISIBILITY_PUBLIC (an HTTP endpoint of the gateway) or VISIBILITY_UNSPECIFIED` });
    }
    if (s.endpoint) {
      if (visibility !== 'VISIBILITY_PUBLIC') out.push({ field: `${at}.endpoint`, rule: 'requires', description: 'an endpoint needs visibility VISIBILITY_PUBLIC' });
      if (s.endpoint.kind === 'ENDPOINT_KIND_TLS_PASSTHROUGH') {
        out.push({ field: `${at}.endpoint.kind`, rule: 'supported', description: 'TLS passthrough is not served: use ENDPOINT_KIND_HTTPS' });
      }
      if (s.endpoint.auth === 'ENDPOINT_AUTH_SHARE_TOKEN') {
        out.push({ field: `${at}.endpoint.auth`, rule: 'supported', description: 'share tokens are not issued: use ENDPOINT_AUTH_OPEN or ENDPOINT_AUTH_TOKEN' });
      }
    }
  }
  return out;
}

/** Built once (a schema is an object graph to build): `httpEndpointsOf` runs on every create. */
const ServiceSpecListSchema = z.array(ServiceSpecSchema);

/** The HTTP endpoints the gateway serves for a stored spec's `services` (public ones only); malformed entries are skipped. */
export function httpEndpointsOf(raw: unknown): HttpEndpoint[] {
  // Most sandboxes declare no service, and every create's launch asks.
  if (raw === undefined || raw === null || (Array.isArray(raw) && raw.length === 0)) return [];
  const parsed = ServiceSpecListSchema.safeParse(raw);
  if (!parsed.success) return [];
  return parsed.data
    .filter((s) => s.visibility === 'VISIBILITY_PUBLIC' && (s.endpoint?.kind ?? 'ENDPOINT_KIND_HTTPS') !== 'ENDPOINT_KIND_TLS_PASSTHROUGH')
    .map((s) => ({
      port: s.port,
      ...(s.name ? { name: s.name } : {}),
      auth: s.endpoint?.auth === 'ENDPOINT_AUTH_TOKEN' ? 'ENDPOINT_AUTH_TOKEN' : 'ENDPOINT_AUTH_OPEN',
      requestTimeoutSeconds: s.endpoint?.requestTimeoutSeconds ?? DEFAULT_ENDPOINT_TIMEOUT_SECONDS,
    }));
}

/** Where the gateway serves a sandbox's public service: `<base>/s/<sandboxId>/<port>/`. */
export const SERVICE_PATH_PREFIX = '/s/';
export function serviceUrl(base: string, sandboxId: string, port: number): string {
  return `${base.replace(/\/+$/, '')}${SERVICE_PATH_PREFIX}${encodeURIComponent(sandboxId)}/${port}/`;
}
