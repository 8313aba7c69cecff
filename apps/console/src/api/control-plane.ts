import {
  IssuedTokenSchema,
  ListApiTokensResponseSchema,
  ListManagedRunnersResponseSchema,
  ListRunnerReleasesResponseSchema,
  ListRunnerRevisionsResponseSchema,
  ManagedRunnerSchema,
  WhoAmIResponseSchema,
  type CreateApiTokenRequest,
  type ManagedRunner,
  type UpdateManagedRunnerBody,
} from '@paddock/contracts';
import { request, type ApiTarget } from './http';

const runnerPath = (id: string): string => `/v1/sandbox/managedRunners/${encodeURIComponent(id)}`;

/**
 * The control-plane calls the console makes, all public REST routes. `ADMIN_ONLY_ROUTES` lists
 * those the API reserves to SANDBOX_ADMIN tokens: the console hides them from other roles, and
 * its browser suite checks that the API refuses each of them to a SANDBOX_USER token.
 */
export const ADMIN_ONLY_ROUTES: readonly { method: string; path: string; body?: unknown }[] = [
  { method: 'GET', path: '/v1/sandbox/managedRunners' },
  { method: 'GET', path: '/v1/sandbox/managedRunners/{runnerId}' },
  { method: 'GET', path: '/v1/sandbox/managedRunners/{runnerId}/revisions' },
  { method: 'PATCH', path: '/v1/sandbox/managedRunners/{runnerId}?updateMask=policy', body: { policy: {}, etag: '{etag}' } },
  { method: 'PATCH', path: '/v1/sandbox/managedRunners/{runnerId}?updateMask=spec.release_channel', body: { spec: { releaseChannel: 'RELEASE_CHANNEL_RAPID' } } },
  { method: 'PATCH', path: '/v1/sandbox/managedRunners/{runnerId}?updateMask=spec.maintenance_policy', body: { spec: { maintenancePolicy: { windows: [] } } } },
  { method: 'POST', path: '/v1/sandbox/managedRunners/{runnerId}:applyAvailableUpdate' },
  { method: 'DELETE', path: '/v1/sandbox/managedRunners/{runnerId}' },
  { method: 'GET', path: '/v1/tokens' },
  { method: 'POST', path: '/v1/tokens', body: { name: 'escalation', role: 'SANDBOX_ADMIN' } },
  { method: 'DELETE', path: '/v1/tokens/{tokenId}' },
];

export const controlPlane = {
  whoami: (t: ApiTarget) => request(t, 'GET', '/v1/auth/whoami', { schema: WhoAmIResponseSchema }),
  listRunners: (t: ApiTarget) => request(t, 'GET', '/v1/sandbox/managedRunners', { query: { pageSize: 100 }, schema: ListManagedRunnersResponseSchema }),
  getRunner: (t: ApiTarget, id: string) => request(t, 'GET', runnerPath(id), { schema: ManagedRunnerSchema }),
  revisions: (t: ApiTarget, id: string) => request(t, 'GET', `${runnerPath(id)}/revisions`, { schema: ListRunnerRevisionsResponseSchema }),
  /** PATCH with an explicit update mask: only the named paths change. */
  updateRunner: (t: ApiTarget, id: string, mask: string, body: UpdateManagedRunnerBody): Promise<ManagedRunner> =>
    request(t, 'PATCH', runnerPath(id), { query: { updateMask: mask }, json: body, schema: ManagedRunnerSchema }),
  applyUpdate: (t: ApiTarget, id: string) => request(t, 'POST', `${runnerPath(id)}:applyAvailableUpdate`, { schema: ManagedRunnerSchema }),
  deleteRunner: (t: ApiTarget, id: string) => request<unknown>(t, 'DELETE', runnerPath(id)),
  releases: (t: ApiTarget, channel?: string) => request(t, 'GET', '/v1/sandbox/releases', { query: { channel }, schema: ListRunnerReleasesResponseSchema }),
  listTokens: (t: ApiTarget) => request(t, 'GET', '/v1/tokens', { schema: ListApiTokensResponseSchema }),
  createToken: (t: ApiTarget, body: CreateApiTokenRequest) => request(t, 'POST', '/v1/tokens', { json: body, schema: IssuedTokenSchema }),
  revokeToken: (t: ApiTarget, id: string) => request<unknown>(t, 'DELETE', `/v1/tokens/${encodeURIComponent(id)}`),
};
