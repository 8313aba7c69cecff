// `pnpm start`: the whole platform on this machine, on the embedded default (local runner backend).
//
// 1. checks prerequisites (scripts/prerequisites.ts: Node, pnpm, Postgres, NATS, bubblewrap,
//    iproute2, nftables, root, cgroups, user namespaces) and, before starting anything, prints one
//    line per missing one with the command that fixes it, instead of a stack trace;
// 2. builds the apps (turbo, cached after the first run), then starts its own nats-server with
//    authentication on a private port (operator mode, this installation's own account; keys,
//    configuration and credentials 0600 under `.paddock/nats/`), stopped when this command stops;
// 3. starts the control plane (migrations + bootstrap token), gives the gateway and the controller
//    their own database roles (the control plane's `db-access` command, run with DATABASE_URL as
//    the database's administrator), then starts the gateway, and the controller with its local
//    driver, which deploys the default runner declared through the control plane API. The runner
//    gets no secret of this script's: the driver starts it with an allow-listed environment and
//    its NATS user in a 0600 file.
// 4. prints the URLs, the admin token and the next commands; Ctrl-C stops everything it started.
//
// Idempotent: data lives in Postgres and `.paddock/` (admin token, NATS keys, runner state); a
// second run reuses both. `NATS_URL` set = use that server instead, without NATS authentication.
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const stateDir = process.env.PADDOCK_STATE_DIR ?? join(root, '.paddock');
mkdirSync(stateDir, { recursive: true });

// Our own nats-server unless the caller names one: a private port, never the machine's 4222.
const managedNats = !process.env.NATS_URL;
const natsPort = process.env.PADDOCK_NATS_PORT ?? '4223';
const env = {
  // The services' logs go to files (.paddock/*.log): JSON lines, whatever the caller's terminal.
  LOG_FORMAT: 'json',
  DATABASE_URL: process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/paddock',
  NATS_URL: process.env.NATS_URL ?? `nats://127.0.0.1:${natsPort}`,
  CONTROL_PLANE_PORT: process.env.CONTROL_PLANE_PORT ?? '8080',
  GATEWAY_PORT: process.env.GATEWAY_PORT ?? '8081',
  GATEWAY_GRPC_PORT: process.env.GATEWAY_GRPC_PORT ?? '8082',
  // The product SDKs' default image, which a laptop cannot pull: the local runner runs it as its base image.
  PADDOCK_IMAGE_ALIASES: process.env.PADDOCK_IMAGE_ALIASES ?? 'python:3.11=paddock/base',
};
/**
 * The policy the default runner is declared with (scripts/embedded-runner-policy.json): small
 * requests under a limit, so a 2-vCPU laptop runs dozens of idle sandboxes at once (the runner
 * reserves capacity by requests: 40 at 50m of its 2 CPUs), each still capped at 1 CPU / 512Mi by
 * its cgroups. Applied when the runner is first declared. The platform default, which a runner
 * declared without a policy gets, stays 1 CPU / 1Gi with requests = limits.
 */
const embeddedRunnerPolicy = readFileSync(join(root, 'scripts', 'embedded-runner-policy.json'), 'utf8');
const cpUrl = `http://127.0.0.1:${env.CONTROL_PLANE_PORT}`;
const gwUrl = `http://127.0.0.1:${env.GATEWAY_PORT}`;
// The control plane serves the web console, which calls the gateway from the page (apps/console).
Object.assign(env, { PADDOCK_CONSOLE_GATEWAY_URL: gwUrl, GATEWAY_CONSOLE_ORIGINS: cpUrl });
const tty = process.stderr.isTTY;
const say = (msg) => process.stderr.write(`${tty ? '\x1b[36mpaddock\x1b[0m' : 'paddock'} ${msg}\n`);
/** Thrown by `fail` once services are up: the flow stops while `shutdown` stops them in order. */
class Stopping extends Error {}
const fail = (msg) => {
  process.stderr.write(`\n${tty ? '\x1b[31merror\x1b[0m' : 'error'}: ${msg}\n`);
  if (children.some(({ child }) => !exited(child))) {
    void shutdown(1);
    throw new Stopping();
  }
  process.exit(1);
};

// The checks are TypeScript, shared with the runner's own (tsx is a root dev dependency): they
// run before the build, so they cannot wait for compiled output.
const { tsImport } = await import('tsx/esm/api');
const checks = await tsImport('./prerequisites.ts', import.meta.url);
const { tcpReachable } = checks;
let natsBin;

/** One line per missing prerequisite, each with its fix; nothing has been started yet. */
async function checkPrerequisites() {
  const facts = await checks.gatherStartFacts({
    repoRoot: root,
    databaseUrl: env.DATABASE_URL,
    natsUrl: managedNats ? undefined : env.NATS_URL,
    natsPort: Number(natsPort),
  });
  const problems = checks.startProblems(facts);
  if (problems.length) {
    for (const p of problems) process.stderr.write(`${checks.formatProblem(p)}\n`);
    process.exit(1);
  }
  natsBin = facts.onPath['nats-server'];
}

const children = [];
let stopping = false;
function startProcess(name, args, extraEnv, cwd = root, command = process.execPath) {
  const child = spawn(command, args, {
    cwd,
    env: { ...process.env, ...env, ...extraEnv },
    stdio: ['ignore', 'pipe', 'pipe'],
    // Its own process group: a Ctrl-C in the terminal reaches only this script, which then stops
    // the services in order (the controller and its runners first, while the gateway still
    // records their sandboxes' ends).
    detached: true,
  });
  const logFile = join(stateDir, `${name}.log`);
  writeFileSync(logFile, '');
  const append = (text) => {
    try { writeFileSync(logFile, text, { flag: 'a' }); } catch { /* log is best effort */ }
  };
  child.stdout.on('data', jsonLines(name, 'stdout', append));
  child.stderr.on('data', jsonLines(name, 'stderr', append));
  child.on('exit', (code, signal) => {
    if (!stopping) {
      say(`${name} exited (${signal ?? code}); see ${logFile}`);
      void shutdown(1);
    }
  });
  children.push({ name, child });
  return child;
}

// nats-server's own log format (`[pid] date time [INF] text`): its level tags.
const NATS_LEVELS = { TRC: 'trace', DBG: 'debug', INF: 'info', WRN: 'warn', ERR: 'error', FTL: 'fatal' };

/**
 * A child's output as whole JSON lines: the services write JSON lines themselves; anything else
 * (nats-server's text, a Node warning, a crash's stack) becomes one JSON line per line of text,
 * `raw: true`, so every line of `.paddock/*.log` is one JSON object a log tool can read.
 */
function jsonLines(service, stream, write) {
  let partial = '';
  return (chunk) => {
    const lines = (partial + chunk.toString()).split('\n');
    partial = lines.pop();
    const out = lines.filter((l) => l.trim() !== '').map((line) => {
      if (line.startsWith('{')) {
        try { JSON.parse(line); return line; } catch { /* not a JSON line: wrapped below */ }
      }
      const nats = /^\[\d+\] \S+ \S+ \[([A-Z]{3})\] (.*)$/.exec(line);
      const level = (nats && NATS_LEVELS[nats[1]]) ?? (stream === 'stderr' ? 'warn' : 'info');
      return JSON.stringify({ level, time: new Date().toISOString(), service, stream, raw: true, msg: nats ? nats[2] : line });
    });
    if (out.length) write(`${out.join('\n')}\n`);
  };
}

const exited = (child) => child.exitCode !== null || child.signalCode !== null;
async function waitExit(child, deadline) {
  while (!exited(child) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  if (!exited(child)) child.kill('SIGKILL');
}

async function shutdown(code = 0) {
  if (stopping) return;
  stopping = true;
  // The controller goes first and alone: it stops the runners it started and their sandboxes
  // (PADDOCK_CONTROLLER_STOP_RUNNERS_ON_EXIT), and their ends must still reach the gateway.
  const controller = children.find((c) => c.name === 'controller');
  if (controller && !exited(controller.child)) {
    say('stopping the runner and its sandboxes...');
    controller.child.kill('SIGTERM');
    await waitExit(controller.child, Date.now() + 8_000);
  }
  say('stopping the gateway and the control plane...');
  const stopAll = async (list) => {
    for (const { child } of list) if (!exited(child)) child.kill('SIGTERM');
    const deadline = Date.now() + 5_000;
    for (const { child } of list) await waitExit(child, deadline);
  };
  await stopAll(children.filter((c) => c !== controller && c.name !== 'nats-server'));
  // The NATS server last, once nothing needs it to drain.
  await stopAll(children.filter((c) => c.name === 'nats-server'));
  say('stopped.');
  process.exit(code);
}
process.on('SIGINT', () => void shutdown(0));
process.on('SIGTERM', () => void shutdown(0));
process.on('SIGHUP', () => void shutdown(0));
// Whatever ends this script (a failure included), its services do not outlive it.
process.on('exit', () => {
  for (const { child } of children) if (!exited(child)) child.kill('SIGKILL');
});

async function waitReady(name, url, timeoutMs = 60_000) {
  const start = Date.now();
  let dots = 0;
  for (;;) {
    try {
      const r = await fetch(url);
      if (r.ok) return;
    } catch { /* not up yet */ }
    if (Date.now() - start > timeoutMs) fail(`${name} did not become ready at ${url} within ${timeoutMs / 1000}s; see .paddock/${name}.log`);
    if (tty && ++dots % 10 === 0) process.stderr.write('.');
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function api(method, url, token, body) {
  const r = await fetch(url, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await r.text();
  let json;
  try { json = text ? JSON.parse(text) : undefined; } catch { json = { raw: text }; }
  return { status: r.status, json };
}

function adminToken() {
  if (process.env.PADDOCK_BOOTSTRAP_TOKEN) return process.env.PADDOCK_BOOTSTRAP_TOKEN;
  const f = join(stateDir, 'admin-token');
  if (existsSync(f)) return readFileSync(f, 'utf8').trim();
  const token = `pdk_${randomBytes(32).toString('base64url')}`;
  writeFileSync(f, `${token}\n`, { mode: 0o600 });
  return token;
}

/**
 * The key the control plane seals secret-store values under: 32 random bytes, generated once and
 * kept (0600) in `.paddock/secrets-key`, so stored secrets stay readable across restarts.
 */
function secretsKey() {
  if (process.env.PADDOCK_SECRETS_KEY) return process.env.PADDOCK_SECRETS_KEY;
  const f = join(stateDir, 'secrets-key');
  if (existsSync(f)) return readFileSync(f, 'utf8').trim();
  const key = randomBytes(32).toString('base64');
  writeFileSync(f, `${key}\n`, { mode: 0o600 });
  return key;
}

const has = (app) => existsSync(join(root, 'apps', app, 'src', 'main.ts'));

/**
 * This installation's NATS: keys and server configuration in `.paddock/nats/` (kept across runs,
 * so issued credentials stay valid), nats-server started on the private port, and the users of
 * the gateway and the control plane issued. The control plane gets the runner and controller
 * signing keys (it issues those users); nothing else gets any key.
 */
async function startNats() {
  const natsLib = (await import(join(root, 'packages', 'nats', 'dist', 'index.js'))).default;
  const inst = await natsLib.openInstallationDir(join(stateDir, 'nats'), { name: 'paddock', server: { host: '127.0.0.1', port: Number(natsPort) } });
  say(`starting nats-server (authentication on) on 127.0.0.1:${natsPort}...`);
  startProcess('nats-server', ['-c', inst.serverConfigFile], {}, root, natsBin);
  const deadline = Date.now() + 15_000;
  while (!(await tcpReachable('127.0.0.1', natsPort, 500))) {
    if (Date.now() > deadline) fail(`nats-server did not listen on ${natsPort}; see .paddock/nats-server.log`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    lib: natsLib,
    inst,
    gateway: { NATS_CREDS: await inst.writeCreds('gateway', 'gateway') },
    controlPlane: {
      NATS_CREDS: await inst.writeCreds('control-plane', 'control-plane'),
      PADDOCK_NATS_RUNNER_SIGNING_KEY: inst.signingKeyFile('runner'),
      PADDOCK_NATS_CONTROLLER_SIGNING_KEY: inst.signingKeyFile('controller'),
    },
  };
}

/** The local cluster's controller user, issued by the control plane as an admin would get it. */
async function controllerCreds(nats, token) {
  const cluster = await api('POST', `${cpUrl}/v1/clusters`, token, { name: 'local', zone: 'local' });
  if (cluster.status >= 300) fail(`registering the local cluster failed: ${JSON.stringify(cluster.json)}`);
  const issued = await api('POST', `${cpUrl}/v1/clusters/${cluster.json.id}/natsCredentials`, token);
  if (issued.status >= 300) fail(`issuing the local controller's NATS credentials failed: ${JSON.stringify(issued.json)}`);
  const file = join(nats.inst.dir, 'creds', 'controller-local.creds');
  nats.lib.writeSecretFile(file, issued.json.creds);
  return { NATS_CREDS: file };
}

// The gateway and the controller connect with roles of their own (what each may read and write
// is in the operator guide); DATABASE_URL is the administrator that creates them. Each start sets
// a fresh password: nothing keeps the previous one.
function databaseRole(args) {
  const r = spawnSync(process.execPath, [join(root, 'apps/control-plane/dist/db-access.js'), ...args], {
    cwd: root,
    env: { ...process.env, DATABASE_URL: env.DATABASE_URL },
    encoding: 'utf8',
  });
  if (r.status !== 0) fail(`creating the database role (db-access ${args.join(' ')}) failed:\n${r.stderr}`);
  return r.stdout.trim().split('\n').pop();
}

async function main() {
  await checkPrerequisites();
  say('prerequisites present');
  const apps = [...['control-plane', 'gateway', 'runner', 'controller'].filter(has), 'console'];
  say(`building ${apps.join(', ')}...`);
  const build = spawnSync(
    'pnpm',
    ['exec', 'turbo', 'run', 'build', '--output-logs=errors-only', ...apps.map((a) => `--filter=@paddock/${a}...`)],
    { cwd: root, stdio: ['ignore', 'inherit', 'inherit'], env: { ...process.env, TURBO_TELEMETRY_DISABLED: '1' } },
  );
  if (build.status !== 0) fail('build failed (see above)');
  const cliBuild = spawnSync('pnpm', ['exec', 'turbo', 'run', 'build', '--output-logs=errors-only', '--filter=@paddock/cli...'], {
    cwd: root,
    stdio: ['ignore', 'inherit', 'inherit'],
    env: { ...process.env, TURBO_TELEMETRY_DISABLED: '1' },
  });
  if (cliBuild.status !== 0) fail('building cwic failed (see above)');

  const token = adminToken();
  const nats = managedNats ? await startNats() : undefined;
  if (!nats) say(`NATS_URL is set: using ${env.NATS_URL} without NATS authentication`);
  say('starting control plane...');
  startProcess('control-plane', [join(root, 'apps/control-plane/dist/main.js')], { PADDOCK_BOOTSTRAP_TOKEN: token, PADDOCK_SECRETS_KEY: secretsKey(), ...nats?.controlPlane });
  await waitReady('control-plane', `${cpUrl}/readyz`);

  if (has('gateway')) {
    say('starting gateway (its own database role)...');
    startProcess('gateway', [join(root, 'apps/gateway/dist/main.js')], { ...nats?.gateway, DATABASE_URL: databaseRole(['gateway']) });
    await waitReady('gateway', `${gwUrl}/readyz`);
  }

  if (has('controller')) {
    say('starting controller (local driver, the database role of cluster "local")...');
    const organization = (await api('GET', `${cpUrl}/v1/auth/whoami`, token)).json?.organization?.id;
    if (!organization) fail('could not read the admin token\'s organization from the control plane (GET /v1/auth/whoami)');
    startProcess('controller', [join(root, 'apps/controller/dist/main.js')], {
      ...(nats ? await controllerCreds(nats, token) : {}),
      DATABASE_URL: databaseRole(['controller', '--cluster', 'local', '--organization', organization]),
      PADDOCK_CONTROL_PLANE_URL: cpUrl,
      PADDOCK_API_KEY: token,
      PADDOCK_CONTROLLER_DRIVER: 'local',
      PADDOCK_CLUSTER_NAME: 'local',
      PADDOCK_ZONE: 'local',
      PADDOCK_CONTROLLER_STATE_DIR: join(stateDir, 'controller'),
      PADDOCK_DECLARE_DEFAULT_RUNNER: 'local',
      PADDOCK_DECLARE_DEFAULT_RUNNER_POLICY: embeddedRunnerPolicy,
      PADDOCK_CONTROLLER_STOP_RUNNERS_ON_EXIT: 'true',
    });
  }
  await waitForRunner(token);

  const line = '─'.repeat(64);
  process.stdout.write(
    `\n${line}\nPaddock is ready.\n\n` +
      `  control plane  ${cpUrl}
  gateway        ${gwUrl}
  gRPC/Connect   http://127.0.0.1:${env.GATEWAY_GRPC_PORT}  (CWSANDBOX_BASE_URL for the product's SDKs)
  console        ${cpUrl}/console/  (sign in with the admin token)
` +
      `  NATS           ${env.NATS_URL}${nats ? ' (authentication on; keys and credentials in .paddock/nats/)' : ''}
` +
      `  admin token    ${token}
  logs           .paddock/*.log

` +
      `Next:\n` +
      `  pnpm cwic auth login ${token} --control-plane-url ${cpUrl} --gateway-url ${gwUrl}\n` +
      `  pnpm cwic sandbox runner get\n` +
      `  pnpm cwic sandbox run -- echo hello\n` +
      `${line}\n(Ctrl-C stops everything)\n`,
  );
}

async function waitForRunner(token) {
  say('waiting for the local runner to be READY and CONNECTED...');
  const start = Date.now();
  for (;;) {
    const r = await api('GET', `${cpUrl}/v1/sandbox/managedRunners/local`, token).catch(() => undefined);
    const connected = r?.json?.connectionStatus === 'RUNNER_CONNECTED' || r?.json?.connectionStatus === 'RUNNER_CONNECTION_STATUS_CONNECTED';
    const ready = r?.json?.installStatus === 'RUNNER_INSTALL_STATUS_READY';
    if (connected && ready) return;
    if (Date.now() - start > 90_000) {
      say(`the local runner is not READY/CONNECTED yet (install ${r?.json?.installStatus}, connection ${r?.json?.connectionStatus}); continuing — see .paddock/*.log`);
      return;
    }
    await new Promise((res) => setTimeout(res, 500));
  }
}

main().catch((e) => {
  if (!(e instanceof Stopping)) fail(e instanceof Error ? e.message : String(e));
});
