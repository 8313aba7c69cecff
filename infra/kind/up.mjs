// The whole platform on kind, from this checkout: `node infra/kind/up.mjs` (Docker, kind, kubectl).
//
// 1. checks its tools (one line each with the fix, as `pnpm start` does) and creates the kind
//    cluster of infra/kind/cluster.yaml unless it exists;
// 2. builds the images (`pnpm images`) and loads every tag into the cluster;
// 3. generates this installation's secrets under .paddock/kind/ (kept across runs: the admin
//    token, Postgres' password, the NATS keys) and creates the Secrets the dev overlay reads
//    first (infra/kind/dev-secrets.ts), then applies infra/k8s/overlays/dev;
// 4. once the control plane answers on 127.0.0.1:8080: registers the cluster, has the control
//    plane issue the controller's NATS user, creates the gateway's and the controller's database
//    roles (db-access, run in the control plane's pod) and their Secrets; the gateway and the
//    controller then start, and the controller deploys the runners declared for the cluster.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const root = new URL('../..', import.meta.url).pathname;
const stateDir = join(root, '.paddock', 'kind');
const { tsImport } = await import('tsx/esm/api');
const secrets = await tsImport('./dev-secrets.ts', import.meta.url);
const { imagePlan } = await tsImport('../docker/images.ts', import.meta.url);
const { findOnPath } = await tsImport('../../scripts/prerequisites.ts', import.meta.url);
const ns = secrets.DEV_NAMESPACE;
const cpUrl = 'http://127.0.0.1:8080';
const gwUrl = 'http://127.0.0.1:8081';

const say = (msg) => process.stderr.write(`paddock ${msg}\n`);
const fail = (line) => {
  process.stderr.write(`error: ${line}\n`);
  process.exit(1);
};
function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { cwd: root, encoding: 'utf8', stdio: opts.input !== undefined ? ['pipe', 'pipe', 'inherit'] : ['ignore', 'pipe', 'inherit'], ...opts });
  if (r.status !== 0 && !opts.allowFailure) fail(`${cmd} ${args.join(' ')} failed (exit ${r.status})`);
  return r;
}

const tools = {
  docker: 'apt-get install docker.io (then: dockerd &)',
  kind: 'go install sigs.k8s.io/kind@latest (or https://kind.sigs.k8s.io/docs/user/quick-start/#installation)',
  kubectl: 'apt-get install kubectl (or https://kubernetes.io/docs/tasks/tools/)',
};
const missing = Object.entries(tools).filter(([t]) => !findOnPath(t));
for (const [t, fix] of missing) process.stderr.write(`error: ${t} is not on PATH (the kind deployment needs it). Fix: ${fix}\n`);
if (missing.length) process.exit(1);
if (run('docker', ['info'], { allowFailure: true, stdio: 'ignore' }).status !== 0) fail('no Docker daemon answers (docker info). Fix: start the daemon (systemctl start docker, or dockerd &)');

if (!run('kind', ['get', 'clusters']).stdout.split('\n').includes('paddock')) {
  say('creating the kind cluster "paddock"...');
  run('kind', ['create', 'cluster', '--config', 'infra/kind/cluster.yaml'], { stdio: 'inherit' });
}
if (!process.argv.includes('--skip-images')) {
  say('building the images (pnpm images)...');
  run('pnpm', ['images'], { stdio: 'inherit' });
}
const images = imagePlan(root).flatMap((b) => b.tags.map((t) => `${b.image}:${t}`));
say(`loading ${images.length} images into kind...`);
run('kind', ['load', 'docker-image', '--name', 'paddock', ...images], { stdio: 'inherit' });

mkdirSync(stateDir, { recursive: true, mode: 0o700 });
function kept(name, make) {
  const f = join(stateDir, name);
  if (!existsSync(f)) writeFileSync(f, `${make()}\n`, { mode: 0o600 });
  return readFileSync(f, 'utf8').trim();
}
const adminToken = kept('admin-token', () => `pdk_${randomBytes(32).toString('base64url')}`);
const postgresPassword = kept('postgres-password', () => randomBytes(24).toString('base64url'));
run('pnpm', ['exec', 'turbo', 'run', 'build', '--output-logs=errors-only', '--filter=@paddock/nats...'], { stdio: 'inherit' });
const natsLib = (await import(join(root, 'packages', 'nats', 'dist', 'index.js'))).default;
const nats = await secrets.natsMaterial(natsLib.openInstallationDir, join(stateDir, 'nats'));

const apply = (list) => run('kubectl', ['apply', '-f', '-'], { input: JSON.stringify({ apiVersion: 'v1', kind: 'List', items: list.map((s) => secrets.secretManifest(s)) }) });
run('kubectl', ['create', 'namespace', ns], { allowFailure: true, stdio: 'ignore' });
say('creating the bootstrap secrets and applying infra/k8s/overlays/dev...');
apply(secrets.bootstrapSecrets({ nats, postgresPassword, adminToken }));
run('kubectl', ['apply', '-k', 'infra/k8s/overlays/dev'], { stdio: 'inherit' });
const rolledOut = (...workloads) => {
  for (const w of workloads) run('kubectl', ['-n', ns, 'rollout', 'status', w, '--timeout=300s'], { stdio: 'inherit' });
};
rolledOut('statefulset/paddock-postgres', 'deployment/paddock-nats', 'deployment/paddock-control-plane');

async function api(method, path, body) {
  const r = await fetch(`${cpUrl}${path}`, { method, headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await r.text();
  if (r.status >= 300) fail(`${method} ${path} answered ${r.status}: ${text}`);
  return text ? JSON.parse(text) : undefined;
}
for (let i = 0; ; i++) {
  if ((await fetch(`${cpUrl}/readyz`).catch(() => undefined))?.ok) break;
  if (i > 150) fail(`the control plane does not answer at ${cpUrl}/readyz (kubectl -n ${ns} logs deployment/paddock-control-plane)`);
  await new Promise((r) => setTimeout(r, 2000));
}
const organization = (await api('GET', '/v1/auth/whoami')).organization?.id;
if (!organization) fail('GET /v1/auth/whoami named no organization for the admin token');
const cluster = await api('POST', '/v1/clusters', { name: secrets.DEV_CLUSTER_NAME, zone: secrets.DEV_CLUSTER_ZONE });
const controllerCreds = (await api('POST', `/v1/clusters/${cluster.id}/natsCredentials`)).creds;
const dbAccess = (...args) =>
  run('kubectl', ['-n', ns, 'exec', 'deployment/paddock-control-plane', '--', 'node', 'dist/db-access.js', ...args]).stdout.trim().split('\n').pop();
say('creating the gateway\'s and the controller\'s database roles and NATS user...');
apply(
  secrets.platformSecrets({
    gatewayDatabaseUrl: dbAccess('gateway'),
    controllerDatabaseUrl: dbAccess('controller', '--cluster', secrets.DEV_CLUSTER_NAME, '--organization', organization),
    controllerCreds,
  }),
);
// They waited for these Secrets (CreateContainerConfigError); a restart starts them now.
run('kubectl', ['-n', ns, 'rollout', 'restart', 'deployment/paddock-gateway', 'deployment/paddock-controller']);
rolledOut('deployment/paddock-gateway', 'deployment/paddock-controller');
process.stdout.write(
  `\nPaddock runs on kind.\n\n  control plane  ${cpUrl}\n  gateway        ${gwUrl}\n  admin token    ${adminToken}  (.paddock/kind/admin-token)\n\n` +
    `Next:\n  pnpm cwic auth login ${adminToken} --control-plane-url ${cpUrl} --gateway-url ${gwUrl}\n` +
    `  echo 'identity: {cluster_name: ${secrets.DEV_CLUSTER_NAME}, zone: ${secrets.DEV_CLUSTER_ZONE}}' | pnpm cwic sandbox runner create kind-runner -f -\n` +
    `  pnpm cwic sandbox runner get     # READY and CONNECTED once the controller has deployed it\n`,
);
