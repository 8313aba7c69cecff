import { EXEC_BEARER_PROTOCOL_PREFIX, EXEC_STREAM_PROTOCOL } from '@paddock/contracts';

/**
 * Browsers cannot set an Authorization header on a WebSocket, so the exec stream also accepts the
 * token as one `Sec-WebSocket-Protocol` entry, `paddock.bearer.<token>`, offered beside
 * `paddock.exec.v1`. Tokens are `pdk_` + base64url, all valid protocol characters.
 */

/** The token carried in the protocols header, as an Authorization value the authenticator reads. */
export function authorizationFromProtocols(header: string | string[] | undefined): string | undefined {
  const list = (Array.isArray(header) ? header.join(',') : (header ?? '')).split(',').map((s) => s.trim());
  const entry = list.find((p) => p.startsWith(EXEC_BEARER_PROTOCOL_PREFIX));
  return entry ? `Bearer ${entry.slice(EXEC_BEARER_PROTOCOL_PREFIX.length)}` : undefined;
}

/**
 * The subprotocol the server answers with: `paddock.exec.v1` when offered, otherwise none. Never
 * the bearer entry, which would send the token back in a response header.
 */
export function selectExecProtocol(protocols: Set<string>): string | false {
  return protocols.has(EXEC_STREAM_PROTOCOL) ? EXEC_STREAM_PROTOCOL : false;
}
