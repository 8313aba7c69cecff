import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { fromJSON } from '@grpc/proto-loader';
import * as protobuf from 'protobufjs';
import type { ProviderDefinition } from '../framework/provider';
import type { Logger } from '../log';
import { makeServerCertificate } from './certificate';
import { handshakeLine } from './handshake';
import { ProviderHost } from './host';
import { PROTO_SOURCES } from './proto-sources';

/**
 * The gRPC plumbing, and nothing else: the three services Terraform calls (tfplugin6.Provider,
 * go-plugin's GRPCController, grpc.health.v1.Health) on a unix socket, over mutual TLS that
 * trusts exactly the client certificate Terraform passed, then the handshake line on stdout.
 */
type ServiceDef = grpc.ServiceDefinition;
interface Loaded {
  tfplugin6: { Provider: { service: ServiceDef } };
  plugin: { GRPCController: { service: ServiceDef } };
  grpc: { health: { v1: { Health: { service: ServiceDef } } } };
}

function loadServices(): Loaded {
  const root = new protobuf.Root();
  for (const text of Object.values(PROTO_SOURCES)) protobuf.parse(text, root, { keepCase: true });
  const definition = fromJSON(root.toJSON(), { keepCase: true, longs: Number, enums: String, defaults: true, oneofs: true });
  return grpc.loadPackageDefinition(definition) as unknown as Loaded;
}

/** A unary handler from an async function; answering never throws into grpc-js. */
function unary<Req, Res>(fn: (req: Req) => Res | Promise<Res>): grpc.handleUnaryCall<Req, Res> {
  return (call, callback) => {
    Promise.resolve()
      .then(() => fn(call.request))
      .then(
        (res) => callback(null, res),
        (e: unknown) => callback({ code: grpc.status.INTERNAL, details: e instanceof Error ? e.message : String(e) }),
      );
  };
}

export interface RunningPlugin {
  socketPath: string;
  /** Resolves when Terraform asked the plugin to shut down (or {@link close} was called). */
  closed: Promise<void>;
  close(): Promise<void>;
}

export async function servePlugin<C>(
  def: ProviderDefinition<C>,
  opts: { clientCertPem: string; log: Logger; socketDir?: string; writeHandshake?: (line: string) => void },
): Promise<RunningPlugin> {
  const services = loadServices();
  const host = new ProviderHost(def, opts.log);
  const cert = makeServerCertificate();
  const server = new grpc.Server({ 'grpc.max_receive_message_length': 256 << 20, 'grpc.max_send_message_length': 256 << 20 });

  let markClosed: () => void = () => undefined;
  const closed = new Promise<void>((r) => (markClosed = r));
  const dir = mkdtempSync(join(opts.socketDir ?? tmpdir(), 'plugin-coreweave-'));
  const socketPath = join(dir, 'provider.sock');
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> =>
    (closing ??= new Promise<void>((resolve) => {
      server.tryShutdown(() => {
        rmSync(dir, { recursive: true, force: true });
        markClosed();
        resolve();
      });
      // In-flight calls (a destroy waiting for teardown) must not hold the process forever.
      setTimeout(() => server.forceShutdown(), 2000).unref();
    }));

  server.addService(services.tfplugin6.Provider.service, {
    GetProviderSchema: unary(() => host.getProviderSchema()),
    ValidateProviderConfig: unary(host.validateProviderConfig.bind(host)),
    ValidateResourceConfig: unary(host.validateResourceConfig.bind(host)),
    ValidateDataResourceConfig: unary(host.validateDataResourceConfig.bind(host)),
    UpgradeResourceState: unary(host.upgradeResourceState.bind(host)),
    ConfigureProvider: unary(host.configureProvider.bind(host)),
    ReadResource: unary(host.readResource.bind(host)),
    PlanResourceChange: unary(host.planResourceChange.bind(host)),
    ApplyResourceChange: unary(host.applyResourceChange.bind(host)),
    ImportResourceState: unary(host.importResourceState.bind(host)),
    ReadDataSource: unary(host.readDataSource.bind(host)),
    StopProvider: unary(() => host.stopProvider()),
  });
  server.addService(services.plugin.GRPCController.service, {
    Shutdown: unary(() => {
      setImmediate(() => void close());
      return {};
    }),
  });
  server.addService(services.grpc.health.v1.Health.service, { Check: unary(() => ({ status: 'SERVING' })) });

  const credentials = grpc.ServerCredentials.createSsl(Buffer.from(opts.clientCertPem), [{ cert_chain: Buffer.from(cert.certPem), private_key: Buffer.from(cert.keyPem) }], true);
  await new Promise<void>((resolve, reject) => server.bindAsync(`unix://${socketPath}`, credentials, (e) => (e ? reject(e) : resolve())));
  (opts.writeHandshake ?? ((l) => process.stdout.write(l)))(handshakeLine(socketPath, cert.der));
  opts.log.log('debug', 'Plugin serving', { socket: socketPath });
  return { socketPath, closed, close };
}
