import { createContextKey, type HandlerContext } from '@connectrpc/connect';
import type { Principal, TokenAuthenticator } from '../auth/token-authenticator';

/** The TCP peer of the call, set per request by the server (the address REST calls `request.ip`). */
export const PEER_ADDRESS = createContextKey<string>('', { description: 'peer address' });

/**
 * Authenticates a call exactly as REST authenticates a request: the same bearer parsing, token
 * lookup and cache, the same single `unauthenticated` error whatever was wrong with the token.
 */
export function principalOf(auth: TokenAuthenticator, ctx: HandlerContext): Promise<Principal> {
  return auth.authenticateRequest({ headers: { authorization: ctx.requestHeader.get('authorization') ?? undefined }, ip: ctx.values.get(PEER_ADDRESS) });
}
