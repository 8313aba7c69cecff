import { httpEndpointsOf, serviceUrl, ServiceSpecSchema } from '@paddock/contracts';
import { z } from 'zod';
import type { SandboxRow, SandboxView } from '../sandboxes/sandbox-view';

/** While the URL of a public service is reported: assigned from create on, withdrawn once the sandbox begins to end. */
const URL_STATES = new Set(['STATE_PENDING', 'STATE_CREATING', 'STATE_RUNNING']);
/** Built once: every view of a sandbox (a create's reply, each get and wait) passes here. */
const ServicesSchema = z.array(ServiceSpecSchema);

/**
 * `status.services`: every declared service as the spec gives it, and for a public one its
 * endpoint with the gateway URL that serves it. A URL means assigned, not serving: requests are
 * relayed only while the sandbox is RUNNING.
 */
export function withServiceStatus(view: SandboxView, row: SandboxRow, base: string | undefined): SandboxView {
  const raw = (row.spec as { services?: unknown } | null)?.services;
  // Most sandboxes declare none: nothing to parse.
  if (raw === undefined || (Array.isArray(raw) && raw.length === 0)) return view;
  const parsed = ServicesSchema.safeParse(raw);
  if (!parsed.success || parsed.data.length === 0) return view;
  const endpoints = new Map(httpEndpointsOf(parsed.data).map((e) => [e.port, e]));
  const live = URL_STATES.has(row.state);
  const services = parsed.data.map((s) => {
    const endpoint = endpoints.get(s.port);
    return {
      port: s.port,
      ...(s.name ? { name: s.name } : {}),
      protocol: s.protocol ?? 'TCP',
      visibility: s.visibility ?? 'VISIBILITY_UNSPECIFIED',
      ...(endpoint
        ? {
            endpoint: {
              kind: 'ENDPOINT_KIND_HTTPS',
              auth: endpoint.auth,
              ...(live && base ? { url: serviceUrl(base, row.id, s.port) } : {}),
            },
          }
        : {}),
    };
  });
  return { ...view, status: { ...view.status, services } };
}
