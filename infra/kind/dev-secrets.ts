// The Secrets the dev overlay (infra/k8s/overlays/dev) references, none of them in the repository:
// `infra/kind/up.mjs` generates them on the developer's machine and creates them in two stages.
//
// - before the overlay is applied: Postgres' superuser password, the control plane's environment
//   (its database and NATS URLs, the bootstrap admin token) and the NATS material of this
//   installation (server configuration, the control plane's and the gateway's users, the runner
//   and controller signing keys), as `pnpm start` makes them with packages/nats;
// - once the control plane answers: the gateway's and this cluster's controller's database roles
//   (`db-access`, run in the control plane's pod) and the controller's NATS user (issued by the
//   control plane's API).
import { readFileSync } from 'node:fs';
import type { openInstallationDir } from '../../packages/nats/src/installation-dir';

export const DEV_NAMESPACE = 'paddock-dev';
export const DEV_CLUSTER_NAME = 'kind-paddock';
export const DEV_CLUSTER_ZONE = 'local';
const NATS_HOST = `paddock-nats.${DEV_NAMESPACE}.svc.cluster.local`;
const POSTGRES_HOST = `paddock-postgres.${DEV_NAMESPACE}.svc.cluster.local`;
/** Where the base mounts each service's NATS Secret (its keys become these files). */
export const NATS_MOUNT = '/var/run/secrets/paddock.dev/nats';

export interface DevSecret {
  name: string;
  stage: 'before-apply' | 'after-control-plane';
  data: Record<string, string>;
}

/** This installation's NATS material, as files' contents. */
export interface NatsMaterial {
  serverConf: string;
  controlPlaneCreds: string;
  gatewayCreds: string;
  runnerSigningKey: string;
  controllerSigningKey: string;
}

/**
 * Opens (or creates) the installation in `dir` with packages/nats, for a server listening at
 * `server` (in the cluster: 0.0.0.0:4222), and reads what the Secrets carry.
 */
export async function natsMaterial(
  open: typeof openInstallationDir,
  dir: string,
  server: { host: string; port: number } = { host: '0.0.0.0', port: 4222 },
): Promise<NatsMaterial> {
  const inst = await open(dir, { name: 'paddock', server });
  const read = (file: string): string => readFileSync(file, 'utf8');
  return {
    serverConf: read(inst.serverConfigFile),
    controlPlaneCreds: read(await inst.writeCreds('control-plane', 'control-plane')),
    gatewayCreds: read(await inst.writeCreds('gateway', 'gateway')),
    runnerSigningKey: read(inst.signingKeyFile('runner')),
    controllerSigningKey: read(inst.signingKeyFile('controller')),
  };
}

export function bootstrapSecrets(o: {
  nats: NatsMaterial;
  postgresPassword: string;
  adminToken: string;
}): DevSecret[] {
  const stage = 'before-apply';
  return [
    { name: 'paddock-postgres', stage, data: { POSTGRES_PASSWORD: o.postgresPassword } },
    {
      name: 'paddock-env',
      stage,
      data: {
        // The administrator: the control plane creates its database and runs db-access with it.
        DATABASE_URL: `postgres://postgres:${encodeURIComponent(o.postgresPassword)}@${POSTGRES_HOST}:5432/paddock`,
        // Fully qualified: the runners the controller deploys live in namespaces of their own.
        NATS_URL: `nats://${NATS_HOST}:4222`,
        PADDOCK_BOOTSTRAP_TOKEN: o.adminToken,
      },
    },
    { name: 'paddock-nats-server', stage, data: { 'server.conf': o.nats.serverConf } },
    {
      name: 'paddock-control-plane-nats',
      stage,
      data: {
        'nats.creds': o.nats.controlPlaneCreds,
        'runner-signing.nk': o.nats.runnerSigningKey,
        'controller-signing.nk': o.nats.controllerSigningKey,
      },
    },
    { name: 'paddock-gateway-nats', stage, data: { 'nats.creds': o.nats.gatewayCreds } },
  ];
}

export function platformSecrets(o: {
  gatewayDatabaseUrl: string;
  controllerDatabaseUrl: string;
  controllerCreds: string;
}): DevSecret[] {
  const stage = 'after-control-plane';
  return [
    { name: 'paddock-gateway-db', stage, data: { DATABASE_URL: o.gatewayDatabaseUrl } },
    { name: 'paddock-controller-db', stage, data: { DATABASE_URL: o.controllerDatabaseUrl } },
    { name: 'paddock-controller-nats', stage, data: { 'nats.creds': o.controllerCreds } },
  ];
}

/** A v1 Secret for `kubectl apply -f -` (values as stringData: kubectl encodes them). */
export function secretManifest(s: DevSecret, namespace = DEV_NAMESPACE): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: s.name, namespace, labels: { 'app.kubernetes.io/part-of': 'paddock' } },
    type: 'Opaque',
    stringData: s.data,
  };
}
