import { join } from 'node:path';
import { createRegistry, fromBinary, isMessage } from '@bufbuild/protobuf';
import { anyUnpack } from '@bufbuild/protobuf/wkt';
import { createClient, type Client } from '@connectrpc/connect';
import { createConnectTransport } from '@connectrpc/connect-node';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { BadRequestSchema, ErrorInfoSchema, RetryInfoSchema, SandboxService, StatusSchema } from '@paddock/proto';

/** The .proto the gateway was generated from: the gRPC test client is built from the same file. */
const PROTO_ROOT = join(__dirname, '..', '..', '..', '..', 'packages', 'proto', 'proto');

/** A message as @grpc/proto-loader presents it (camelCase fields, enums and 64-bit ints as strings). */
export type Wire = Record<string, unknown>;

export interface RawSandboxClient extends grpc.Client {
  streamExec(md: grpc.Metadata): grpc.ClientDuplexStream<Wire, Wire>;
  streamLogs(req: Wire, md: grpc.Metadata): grpc.ClientReadableStream<Wire>;
}

export interface GrpcSandboxClient {
  raw: RawSandboxClient;
  unary(method: string, req: Wire, token?: string): Promise<Wire>;
  close(): void;
}

/**
 * A plain gRPC client (@grpc/grpc-js over h2c, the stack the product's TypeScript SDK uses),
 * loaded at run time from the .proto, independent of the server's generated code.
 */
export function grpcClient(url: string, rootCert?: Buffer): GrpcSandboxClient {
  const def = protoLoader.loadSync(join(PROTO_ROOT, 'coreweave/sandbox/v1/sandbox.proto'), {
    includeDirs: [PROTO_ROOT],
    longs: String,
    enums: String,
    defaults: true,
    oneofs: true,
  });
  const pkg = grpc.loadPackageDefinition(def) as unknown as { coreweave: { sandbox: { v1: { SandboxService: grpc.ServiceClientConstructor } } } };
  const raw = new pkg.coreweave.sandbox.v1.SandboxService(new URL(url).host, rootCert ? grpc.credentials.createSsl(rootCert) : grpc.credentials.createInsecure(), {
    'grpc.max_receive_message_length': 100 * 1024 * 1024,
    'grpc.max_send_message_length': 100 * 1024 * 1024,
  }) as unknown as RawSandboxClient;
  return {
    raw,
    unary(method, req, token) {
      return new Promise((resolve, reject) => {
        const fn = (raw as unknown as Record<string, (r: Wire, m: grpc.Metadata, cb: (e: grpc.ServiceError | null, res: Wire) => void) => void>)[
          method.charAt(0).toLowerCase() + method.slice(1)
        ];
        if (!fn) throw new Error(`no method ${method}`);
        fn.call(raw, req, metadataWith(token), (e, res) => (e ? reject(e) : resolve(res)));
      });
    },
    close: () => raw.close(),
  };
}

export function metadataWith(token?: string): grpc.Metadata {
  const md = new grpc.Metadata();
  if (token !== undefined) md.set('authorization', `Bearer ${token}`);
  return md;
}

/** The google.rpc.Status a gRPC error carried, its details unpacked. */
export interface DecodedStatus {
  code: number;
  message: string;
  reason?: string;
  domain?: string;
  metadata?: Record<string, string>;
  violations?: { field: string; description: string }[];
  retryDelaySeconds?: number;
}

const DETAILS = createRegistry(ErrorInfoSchema, BadRequestSchema, RetryInfoSchema);

export function decodeGrpcError(e: unknown): DecodedStatus {
  const err = e as grpc.ServiceError;
  if (typeof err?.code !== 'number') throw e;
  const bin = err.metadata?.get('grpc-status-details-bin')[0];
  const out: DecodedStatus = { code: err.code, message: err.details };
  if (!bin) return out;
  const status = fromBinary(StatusSchema, bin as Buffer);
  out.message = status.message;
  for (const any of status.details) {
    const d = anyUnpack(any, DETAILS);
    if (isMessage(d, ErrorInfoSchema)) Object.assign(out, { reason: d.reason, domain: d.domain, metadata: d.metadata });
    if (isMessage(d, BadRequestSchema)) out.violations = d.fieldViolations.map((v) => ({ field: v.field, description: v.description }));
    if (isMessage(d, RetryInfoSchema)) out.retryDelaySeconds = Number(d.retryDelay?.seconds ?? 0);
  }
  return out;
}

/** A Connect-protocol client (JSON, over HTTP/1.1 or HTTP/2) from the generated service descriptor. */
export function connectClient(url: string, token?: string, httpVersion: '1.1' | '2' = '1.1'): Client<typeof SandboxService> {
  const transport = createConnectTransport({
    baseUrl: url,
    httpVersion,
    useBinaryFormat: false,
    interceptors: token === undefined ? [] : [(next) => (req) => {
      req.header.set('authorization', `Bearer ${token}`);
      return next(req);
    }],
  });
  return createClient(SandboxService, transport);
}
