import { request as httpRequest, type IncomingMessage, type OutgoingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { httpEndpointsOf, PaddockError, SERVICE_PATH_PREFIX } from '@paddock/contracts';
import type { TokenAuthenticator } from '../auth/token-authenticator';
import type { RunnerClient } from '../runners/runner-client';
import type { SandboxRow } from '../sandboxes/sandbox-view';
import { openServiceTunnel, type ServiceTunnel } from './service-tunnel';

/**
 * Serves sandboxes' public services on the gateway's own port, at `/s/<sandboxId>/<port>/<path>`
 * (plain HTTP; TLS, when wanted, is the job of whatever fronts the gateway). Each request, and
 * each WebSocket, is one TCP connection into the sandbox, relayed by its runner (`portForward`),
 * so it reaches the sandbox's own loopback whether or not the sandbox has egress. Requests are
 * relayed only while the sandbox is RUNNING and only to ports its spec makes public;
 * `ENDPOINT_AUTH_TOKEN` services want an API token of the sandbox's organization (which is not
 * passed on into the sandbox), `ENDPOINT_AUTH_OPEN` ones nothing.
 *
 * These requests bypass Fastify (its body parsers would consume and refuse arbitrary bodies):
 * the server's `request` and `upgrade` listeners are wrapped so the service prefix comes here
 * first and everything else goes on to the gateway's own routes untouched.
 */
export interface ServiceProxyDeps {
  findSandbox(id: string): Promise<SandboxRow | undefined>;
  runners: RunnerClient;
  auth: TokenAuthenticator;
  onError?: (e: unknown) => void;
}

interface Target {
  runnerId: string;
  sandboxId: string;
  organizationId: string;
  port: number;
  /** Path and query inside the sandbox. */
  path: string;
  prefix: string;
  timeoutMs: number;
  /** Drop the caller's Authorization header (a gateway credential) before it reaches the sandbox. */
  stripAuth: boolean;
}

const SERVICE_PATH = /^\/s\/([^/?#]+)\/(\d{1,5})(\/[^]*)?$/;
/** Headers of one hop, never relayed (RFC 9110 §7.6.1). */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade']);

export function isServicePath(url: string | undefined): boolean {
  return !!url && url.startsWith(SERVICE_PATH_PREFIX);
}

const notFound = (what: string): PaddockError => new PaddockError('not_found', what, { reason: 'CWSANDBOX_SANDBOX_NOT_FOUND' });

async function resolveTarget(deps: ServiceProxyDeps, req: IncomingMessage): Promise<Target | { redirect: string }> {
  const m = SERVICE_PATH.exec(req.url ?? '');
  if (!m) throw notFound('service URLs look like /s/<sandboxId>/<port>/');
  const [, rawId, rawPort, rest] = m as unknown as [string, string, string, string | undefined];
  const prefix = `${SERVICE_PATH_PREFIX}${rawId}/${rawPort}`;
  // A relative link in the service's pages must resolve under the prefix.
  if (rest === undefined) return { redirect: `${prefix}/` };
  const sandboxId = decodeURIComponent(rawId);
  const port = Number(rawPort);
  const row = await deps.findSandbox(sandboxId);
  const endpoint = row ? httpEndpointsOf((row.spec as { services?: unknown } | null)?.services).find((e) => e.port === port) : undefined;
  if (!row || !endpoint) throw notFound(`no public service on port ${port} of sandbox ${sandboxId}`);
  if (endpoint.auth === 'ENDPOINT_AUTH_TOKEN') {
    const principal = await deps.auth.authenticateRequest({ headers: { authorization: req.headers.authorization }, ip: req.socket.remoteAddress ?? '' });
    // Another organization's token learns nothing, not even that the sandbox exists.
    if (principal.organizationId !== row.organization_id) throw notFound(`no public service on port ${port} of sandbox ${sandboxId}`);
  }
  // A paused sandbox is served too: its runner resumes it first, as for an exec.
  if (row.state !== 'STATE_RUNNING' && row.state !== 'STATE_PAUSED') {
    throw new PaddockError('unavailable', `sandbox ${sandboxId} is ${row.state}: its services are served only while it runs`, {
      reason: 'CWSANDBOX_SERVICE_UNAVAILABLE',
      metadata: { state: row.state },
    });
  }
  return {
    runnerId: row.runner_id,
    sandboxId: row.id,
    organizationId: row.organization_id,
    port,
    path: rest.startsWith('/') ? rest : `/${rest}`,
    prefix,
    timeoutMs: endpoint.requestTimeoutSeconds * 1000,
    stripAuth: endpoint.auth === 'ENDPOINT_AUTH_TOKEN',
  };
}

function toPaddock(e: unknown): PaddockError {
  if (e instanceof PaddockError) return e;
  return new PaddockError('unavailable', `the sandbox service did not answer: ${e instanceof Error ? e.message : String(e)}`, { reason: 'CWSANDBOX_SERVICE_UNAVAILABLE' });
}

function sendError(res: ServerResponse, e: unknown): void {
  const err = toPaddock(e);
  if (res.headersSent) {
    res.destroy();
    return;
  }
  res.writeHead(err.httpStatus, { 'content-type': 'application/json', 'cache-control': 'no-store' });
  res.end(JSON.stringify(err.toBody()));
}

function forwardedHeaders(req: IncomingMessage, t: Target): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  for (const [k, v] of Object.entries(req.headers)) {
    if (v === undefined || HOP_BY_HOP.has(k) || (t.stripAuth && k === 'authorization')) continue;
    out[k] = v;
  }
  out['x-forwarded-for'] = req.socket.remoteAddress ?? '';
  out['x-forwarded-prefix'] = t.prefix;
  if (req.headers.host) out['x-forwarded-host'] = req.headers.host;
  return out;
}

async function serveHttp(deps: ServiceProxyDeps, req: IncomingMessage, res: ServerResponse): Promise<void> {
  let tunnel: ServiceTunnel | undefined;
  try {
    const t = await resolveTarget(deps, req);
    if ('redirect' in t) {
      res.writeHead(308, { location: t.redirect }).end();
      return;
    }
    const opened = await openServiceTunnel(deps.runners, t);
    tunnel = opened;
    // One relayed connection per request (no agent: Node asks the sandbox to close it after the answer).
    const upstream = httpRequest({ method: req.method, path: t.path, headers: forwardedHeaders(req, t), createConnection: () => opened });
    upstream.setTimeout(t.timeoutMs, () =>
      upstream.destroy(new PaddockError('deadline_exceeded', `the sandbox service did not answer within ${t.timeoutMs / 1000} s`, { reason: 'CWSANDBOX_SERVICE_UNAVAILABLE' })),
    );
    upstream.on('response', (answer) => {
      const headers: OutgoingHttpHeaders = {};
      for (const [k, v] of Object.entries(answer.headers)) if (v !== undefined && !HOP_BY_HOP.has(k)) headers[k] = v;
      res.writeHead(answer.statusCode ?? 502, answer.statusMessage, headers);
      answer.pipe(res);
      answer.on('error', () => res.destroy());
    });
    upstream.on('error', (e) => sendError(res, e));
    res.on('close', () => opened.destroy());
    req.pipe(upstream);
  } catch (e) {
    tunnel?.destroy();
    sendError(res, e);
  }
}

function rejectUpgrade(socket: Duplex, e: unknown): void {
  const err = toPaddock(e);
  const body = JSON.stringify(err.toBody());
  socket.end(`HTTP/1.1 ${err.httpStatus} Error\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
}

async function serveUpgrade(deps: ServiceProxyDeps, req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
  try {
    const t = await resolveTarget(deps, req);
    if ('redirect' in t) throw notFound(`service URLs end with a slash: ${t.redirect}`);
    const tunnel = await openServiceTunnel(deps.runners, t);
    // The upgrade request goes on as it came (its Connection/Upgrade headers included), then both
    // directions are spliced: from here on the bytes are the WebSocket's own.
    const lines = [`${req.method ?? 'GET'} ${t.path} HTTP/1.1`];
    for (let i = 0; i < req.rawHeaders.length; i += 2) {
      const name = req.rawHeaders[i] as string;
      if (t.stripAuth && name.toLowerCase() === 'authorization') continue;
      lines.push(`${name}: ${req.rawHeaders[i + 1] as string}`);
    }
    lines.push(`X-Forwarded-Prefix: ${t.prefix}`);
    tunnel.write(`${lines.join('\r\n')}\r\n\r\n`);
    if (head.length > 0) tunnel.write(head);
    tunnel.on('error', () => socket.destroy());
    socket.on('error', () => tunnel.destroy());
    socket.on('close', () => tunnel.destroy());
    tunnel.on('close', () => socket.destroy());
    socket.pipe(tunnel);
    tunnel.pipe(socket);
  } catch (e) {
    rejectUpgrade(socket, e);
  }
}

type RequestListener = (req: IncomingMessage, res: ServerResponse) => void;
type UpgradeListener = (req: IncomingMessage, socket: Duplex, head: Buffer) => void;

/** Puts the service prefix in front of the server's own `request` and `upgrade` handling. */
export function installServiceProxy(server: Server, deps: ServiceProxyDeps): void {
  const requestListeners = server.listeners('request') as RequestListener[];
  const upgradeListeners = server.listeners('upgrade') as UpgradeListener[];
  server.removeAllListeners('request');
  server.removeAllListeners('upgrade');
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    if (isServicePath(req.url)) return void serveHttp(deps, req, res).catch((e: unknown) => deps.onError?.(e));
    for (const l of requestListeners) l.call(server, req, res);
  });
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    if (isServicePath(req.url)) return void serveUpgrade(deps, req, socket, head).catch((e: unknown) => deps.onError?.(e));
    for (const l of upgradeListeners) l.call(server, req, socket, head);
  });
}
