import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { startK8sTestServer } from './src';
const run = (...args: string[]): Promise<string> =>
  new Promise((resolve) => execFile('kubectl', ['--kubeconfig', '/tmp/k8sts-kubeconfig', ...args], { encoding: 'utf8', timeout: 20000 }, (err, out, errOut) => resolve(err ? `ERR ${errOut}` : out)));
async function main() {
  const s = await startK8sTestServer({});
  writeFileSync('/tmp/k8sts-kubeconfig', s.kubeConfig().exportConfig());
  console.log(await run('get', 'nodes'));
  console.log(await run('create', 'deployment', 'web', '--image=nginx', '--replicas=2'));
  await new Promise((r) => setTimeout(r, 2500));
  console.log(await run('get', 'deploy,rs,pods'));
  console.log(await run('exec', 'deploy/web', '--', 'echo', 'hi'));
  await s.close();
}
void main();
