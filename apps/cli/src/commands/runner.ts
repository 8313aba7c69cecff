import type { Command } from 'commander';
import type { Ctx } from '../context';
import { runnerActions } from '../lazy';

/** Declarations only: the work is in `../actions/runner`, loaded when a command runs (see `../lazy`). */
export function registerRunnerCommands(sandbox: Command, ctx: Ctx): Command {
  const runner = sandbox.command('runner').description('manage the managed runners of your organization (needs SANDBOX_ADMIN)');

  runner
    .command('create')
    .argument('[RUNNER-ID]', 'runner id, unique in your organization')
    .description('deploy a runner (wizard on a terminal, or -f FILE / -f - for YAML or JSON)')
    .option('-f, --file <FILE>', 'runner spec file, or - for stdin')
    .option('--print-template', 'print a complete template and exit')
    .option('--request-id <TOKEN>', 'idempotency token (generated if omitted)')
    .option('-o, --output <FORMAT>', 'print the created runner (json|yaml|table|wide|name)')
    .option('--wait', 'wait until the runner connects (progress on a terminal only)')
    .option('--timeout <SECONDS>', 'with --wait: give up after this long', '300')
    .action((id: string | undefined, o: { file?: string; printTemplate?: boolean; requestId?: string; output?: string; wait?: boolean; timeout?: string }) => runnerActions().then((a) => a.createRunner(ctx, id, o)));

  runner
    .command('get')
    .alias('ls')
    .argument('[RUNNER-ID]', 'runner id or UUID')
    .description('list runners, or show one')
    .option('--zone <ZONE>', 'only runners in this zone')
    .option('--cluster <CLUSTER-ID>', 'only runners on this cluster')
    .option('--connection-status <STATUS>', 'CONNECTED or DISCONNECTED')
    .option('-o, --output <FORMAT>', 'table|wide|json|yaml|name (json prints an array)', 'table')
    .option('--no-headers', 'omit table headers')
    .action((id: string | undefined, o: { zone?: string; cluster?: string; connectionStatus?: string; output?: string; headers?: boolean }) =>
      runnerActions().then((a) => a.getRunners(ctx, id, { ...o, noHeaders: o.headers === false })),
    );

  runner
    .command('describe')
    .argument('<RUNNER-ID>', 'runner id or UUID')
    .description('detailed view: status, revisions, maintenance, install error and hints, recent history')
    .option('-o, --output <FORMAT>', 'json|yaml')
    .action((id: string, o: { output?: string }) => runnerActions().then((a) => a.describeRunner(ctx, id, o)));

  runner
    .command('edit')
    .argument('<RUNNER-ID>', 'runner id or UUID')
    .description('edit mutable settings and policy ($EDITOR, or -f FILE|- to patch only what the file names)')
    .option('-f, --file <FILE>', 'patch file, or - for stdin')
    .option('--print-template', 'export the mutable settings, the policy and its etag together')
    .option('--etag <TOKEN>', 'pin the policy revision explicitly')
    .option('-o, --output <FORMAT>', 'print the updated runner')
    .action((id: string, o: { file?: string; printTemplate?: boolean; etag?: string; output?: string }) => runnerActions().then((a) => a.editRunner(ctx, id, o)));

  runner
    .command('upgrade')
    .argument('<RUNNER-ID>', 'runner id or UUID')
    .description('apply the available update now instead of waiting for a maintenance window')
    .option('-o, --output <FORMAT>', 'print the runner')
    .action((id: string, o: { output?: string }) => runnerActions().then((a) => a.upgradeRunner(ctx, id, o)));

  runner
    .command('delete')
    .argument('<RUNNER-ID...>', 'one or more runner ids')
    .description('decommission runners (their sandboxes stop; their policies go with them)')
    .option('-y, --yes', 'do not ask for confirmation')
    .option('--allow-missing', 'succeed for runners that do not exist')
    .action((ids: string[], o: { yes?: boolean; allowMissing?: boolean }) => runnerActions().then((a) => a.deleteRunners(ctx, ids, o)));

  runner
    .command('history')
    .argument('<RUNNER-ID>', 'runner id or UUID')
    .description("the runner's revisions from the event log")
    .option('--diff <REV...>', 'show what changed between two revisions, e.g. --diff 2 5')
    .option('-o, --output <FORMAT>', 'json|yaml')
    .action((id: string, o: { output?: string; diff?: string[] }) => runnerActions().then((a) => a.history(ctx, id, o)));

  runner
    .command('diff')
    .argument('[RUNNER-ID]', 'runner id (default: identity.runner_id in the file)')
    .description('show the drift between a runner file and the server')
    .requiredOption('-f, --file <FILE>', 'desired runner (YAML or JSON), or -')
    .action((id: string | undefined, o: { file: string }) => runnerActions().then((a) => a.diffCmd(ctx, o, id)));

  runner
    .command('apply')
    .argument('[RUNNER-ID]', 'runner id (default: identity.runner_id in the file)')
    .description('create or update a runner to match a file (idempotent: no change, no update)')
    .requiredOption('-f, --file <FILE>', 'desired runner (YAML or JSON), or -')
    .option('--request-id <TOKEN>', 'idempotency token for a create')
    .action((id: string | undefined, o: { file: string; requestId?: string }) => runnerActions().then((a) => a.applyCmd(ctx, o, id)));

  return runner;
}
