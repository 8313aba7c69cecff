// `pnpm images`: builds every container image of infra/docker/images.ts with Docker, each once,
// under every tag something references (`--dry-run` prints the docker commands instead).
// Without Docker, or with a docker client but no daemon, it says so and exits 1.
import { spawnSync } from 'node:child_process';

const root = new URL('../..', import.meta.url).pathname;
const { tsImport } = await import('tsx/esm/api');
const { imagePlan, dockerBuildArgs } = await tsImport('./images.ts', import.meta.url);
const { findOnPath } = await tsImport('../../scripts/prerequisites.ts', import.meta.url);

const fail = (line) => {
  process.stderr.write(`error: ${line}\n`);
  process.exit(1);
};

const plan = imagePlan(root);
const dryRun = process.argv.includes('--dry-run');
if (dryRun) {
  for (const b of plan) process.stdout.write(`docker ${dockerBuildArgs(b).join(' ')}\n`);
  process.exit(0);
}
const docker = findOnPath('docker');
if (!docker) fail('docker is not on PATH: pnpm images builds the images with Docker. Fix: apt-get install docker.io (then: dockerd &), or run pnpm images --dry-run for the commands');
const info = spawnSync(docker, ['info', '--format', '{{.ServerVersion}}'], { encoding: 'utf8', timeout: 30_000 });
if (info.status !== 0) {
  const why = (info.stderr || info.stdout || '').trim().split('\n').filter(Boolean).pop() ?? `exit ${info.status}`;
  const reason = why.replace(/[.?!]+$/, '');
  fail(`docker is installed (${docker}) but no Docker daemon answers (${reason}). Fix: start the daemon (systemctl start docker, or dockerd &)`);
}
for (const b of plan) {
  process.stderr.write(`paddock building ${b.image} (${b.tags.join(', ')})...\n`);
  const r = spawnSync(docker, dockerBuildArgs(b), { cwd: root, stdio: 'inherit' });
  if (r.status !== 0) fail(`docker build of ${b.image} failed (see above)`);
}
process.stdout.write(`built:\n${plan.flatMap((b) => b.tags.map((t) => `  ${b.image}:${t}`)).join('\n')}\n`);
