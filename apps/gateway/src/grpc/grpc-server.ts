import { readFileSync } from 'node:fs';
import type { OutgoingHttpHeaders } from 'node:http';
import http2 from 'node:http2';
import type net from 'node:net';
import type { AddressInfo } from 'node:net';
import { createContextValues, type ConnectRouter, type HandlerContext, type ServiceImpl } from '@connectrpc/connect';
import { connectNodeAdapter } from '@connectrpc/connect-node';
import type { FastifyInstance } from 'fastify';
import { SandboxService } from '@paddock/proto';
import { PEER_ADDRESS } from './call-context';
import { sandboxServiceImpl, type SandboxServiceDeps } from './sandbox-service';
import { toConnectError } from './status-mapping';

export interface GrpcServerOptions {
  port: number;
  host: string;
  /** PEM files; both set = TLS (h2 and HTTP/1.1 negotiated by ALPN), neither = cleartext. */
  tlsCertFile?: string;
  tlsKeyFile?: string;
}

export interface RunningGrpcServer {
  /** `http://host:port` (or https): what CWSANDBOX_BASE_URL points at. */
  url: string;
  port: number;
  close(): Promise<void>;
}

/** The service path prefix: the Connect protocol is also served at it on the REST port. */
export const SANDBOX_SERVICE_PATH_PREFIX = `/${SandboxService.typeName}/`;

export type NodeHandler = ReturnType<typeof connectNodeAdapter>;

/** One handler for `coreweave.sandbox.v1.SandboxService`: gRPC, gRPC-web and Connect. */
export function sandboxServiceHandler(deps: SandboxServiceDeps, readMaxBytes: number): NodeHandler {
  const handler = connectNodeAdapter({
    routes: (router: ConnectRouter) => router.service(SandboxService, withStatusMapping(sandboxServiceImpl(deps))),
    readMaxBytes,
    contextValues: (req) => createContextValues().set(PEER_ADDRESS, req.socket.remoteAddress ?? ''),
  });
  return (req, res) => {
    const addTrailers = res.addTrailers.bind(res);
    res.addTrailers = (headers: OutgoingHttpHeaders) => addTrailers(withSpecGrpcMessage(headers));
    handler(req, res);
  };
}

/**
 * `grpc-message` as the gRPC spec encodes it (only `%` and bytes outside printable ASCII are
 * escaped). The library escapes like `encodeURIComponent`, and @grpc/grpc-js, the SDKs' stack,
 * decodes with `decodeURI`, which leaves `%3B` and friends in the message a user reads.
 */
function withSpecGrpcMessage(headers: OutgoingHttpHeaders): OutgoingHttpHeaders {
  const m = headers['grpc-message'];
  if (typeof m !== 'string') return headers;
  let text: string;
  try {
    text = decodeURIComponent(m);
  } catch {
    return headers;
  }
  const encoded = [...Buffer.from(text, 'utf8')].map((b) => (b >= 0x20 && b <= 0x7e && b !== 0x25 ? String.fromCharCode(b) : `%${b.toString(16).toUpperCase().padStart(2, '0')}`)).join('');
  return { ...headers, 'grpc-message': encoded };
}

/**
 * The gRPC port: HTTP/2 without TLS (h2c, what the SDKs use for an `http://` base URL) or, with a
 * certificate, TLS with h2 and HTTP/1.1 negotiated by ALPN. Cleartext HTTP/1.1 (Connect JSON from
 * a plain HTTP client) is served at the same paths on the REST port, which speaks HTTP/1.1.
 */
export async function startGrpcServer(handler: NodeHandler, opts: GrpcServerOptions): Promise<RunningGrpcServer> {
  const sockets = new Set<net.Socket>();
  const tls = opts.tlsCertFile && opts.tlsKeyFile ? { cert: readFileSync(opts.tlsCertFile), key: readFileSync(opts.tlsKeyFile) } : null;
  const server = tls ? http2.createSecureServer({ ...tls, allowHTTP1: true }, handler) : http2.createServer(handler);
  server.on('connection', (s: net.Socket) => {
    // Small frames (a unary reply, a stdin chunk) go out at once, not after the peer's ACK.
    s.setNoDelay(true);
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `${tls ? 'https' : 'http'}://127.0.0.1:${port}`,
    port,
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Open streams (followed logs, interactive execs) would hold the port forever.
        for (const s of sockets) s.destroy();
      });
    },
  };
}

type AnyImpl = Record<string, (req: unknown, ctx: HandlerContext) => unknown>;

/**
 * Every error a handler raises, thrown or mid-stream, leaves as a `google.rpc.Status` built by
 * `toConnectError` (the same code, message and reason REST would send).
 */
function withStatusMapping(impl: ServiceImpl<typeof SandboxService>): ServiceImpl<typeof SandboxService> {
  const out: AnyImpl = {};
  for (const [name, fn] of Object.entries(impl as unknown as AnyImpl)) {
    const kind = SandboxService.method[name as keyof typeof SandboxService.method].methodKind;
    out[name] =
      kind === 'unary'
        ? async (req, ctx) => {
            try {
              return await fn(req, ctx);
            } catch (e) {
              throw toConnectError(e);
            }
          }
        : async function* (req, ctx) {
            try {
              yield* fn(req, ctx) as AsyncIterable<unknown>;
            } catch (e) {
              throw toConnectError(e);
            }
          };
  }
  return out as unknown as ServiceImpl<typeof SandboxService>;
}

/**
 * The Connect protocol over HTTP/1.1 (JSON or binary) at the service paths of the REST port: the
 * request leaves Fastify before its body is parsed, and the same handler answers it.
 */
export function serveConnectOnRestPort(fastify: FastifyInstance, handler: NodeHandler): void {
  fastify.addHook('onRequest', (req, reply, done) => {
    if (!req.url.startsWith(SANDBOX_SERVICE_PATH_PREFIX)) return done();
    void reply.hijack();
    handler(req.raw, reply.raw);
  });
}
