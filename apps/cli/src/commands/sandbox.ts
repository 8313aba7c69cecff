import type { Command } from 'commander';
import type { CreateFlags, SnapshotFlags, StopFlags } from '../actions/sandbox';
import type { Ctx } from '../context';
import { sandboxActions } from '../lazy';

/** The spec-building options `create` and `run` share (see `buildSpec` in the actions). */
function withSpecOptions(cmd: Command): Command {
  return cmd
    .option('-f, --file <FILE>', 'sandbox spec (YAML or JSON), or -')
    .option('--image <IMAGE>', 'container image')
    .option('--cpu <QUANTITY>', 'cpu, e.g. 500m or 2')
    .option('--memory <QUANTITY>', 'memory, e.g. 512Mi')
    .option('--lifetime <SECONDS>', 'max lifetime in seconds')
    .option('--tag <TAG...>', 'tags')
    .option('--runner-id <ID...>', 'restrict placement to these runners')
    .option('--env <KEY=VALUE...>', 'environment variables')
    .option('--port <PORT...>', 'serve these ports publicly through the gateway (HTTP, open); create prints their URLs')
    .option('--request-id <TOKEN>', 'idempotency token');
}

/** Declarations only: the work is in `../actions/sandbox`, loaded when a command runs (see `../lazy`). */
export function registerSandboxCommands(sandbox: Command, ctx: Ctx): void {
  withSpecOptions(
    sandbox
      .command('create')
      .description('create a sandbox through the gateway (prints its id; --wait waits for RUNNING)')
      .argument('[COMMAND...]', 'main command (after --); default: the image default'),
  )
    .option('--wait', 'wait until RUNNING')
    .option('-o, --output <FORMAT>', 'name|json|yaml|table', 'name')
    .action((command: string[], o: CreateFlags) => sandboxActions().then((a) => a.createSandbox(ctx, command, o)));

  withSpecOptions(
    sandbox
      .command('run')
      .description('create a sandbox running COMMAND, stream its output, exit with its exit code, and stop it')
      .argument('<COMMAND...>', 'main command and arguments (after --)'),
  ).action((command: string[], o: CreateFlags) => sandboxActions().then((a) => a.runSandbox(ctx, command, o)));

  sandbox
    .command('ls')
    .alias('list')
    .description('list sandboxes')
    .option('--tag <TAG...>', 'only sandboxes with every one of these tags')
    .option('--state <STATE>', 'e.g. RUNNING')
    .option('--runner-id <ID...>', 'only on these runners')
    .option('-a, --all', 'include terminated sandboxes')
    .option('-o, --output <FORMAT>', 'table|wide|json|yaml|name', 'table')
    .action((o: { tag?: string[]; state?: string; runnerId?: string[]; all?: boolean; output?: string }) => sandboxActions().then((a) => a.listSandboxes(ctx, o)));

  sandbox
    .command('get')
    .argument('<SANDBOX-ID>', 'sandbox id')
    .description('show one sandbox (placement decision included with -o json)')
    .option('-o, --output <FORMAT>', 'table|wide|json|yaml|name', 'table')
    .action((ref: string, o: { output?: string }) => sandboxActions().then((a) => a.getSandbox(ctx, ref, o)));

  sandbox
    .command('exec')
    .argument('<SANDBOX-ID>', 'sandbox id')
    .argument('<COMMAND...>', 'command and arguments (after --)')
    .description("run a command, stream its output and exit with the command's exit code")
    .option('--cwd <DIR>', 'working directory')
    .option('--env <KEY=VALUE...>', 'environment variables')
    .option('--timeout <SECONDS>', 'kill the command after this long')
    .option('-t, --tty', 'allocate a terminal')
    .action((ref: string, command: string[], o: { cwd?: string; env?: string[]; timeout?: string; tty?: boolean }) => sandboxActions().then((a) => a.execSandbox(ctx, ref, command, o)));

  sandbox
    .command('sh')
    .argument('<SANDBOX-ID>', 'sandbox id')
    .description('interactive shell in the sandbox')
    .option('--cmd <COMMAND>', 'run this shell command instead of an interactive shell')
    .action((ref: string, o: { cmd?: string }) => sandboxActions().then((a) => a.shSandbox(ctx, ref, o)));

  sandbox
    .command('logs')
    .argument('<SANDBOX-ID>', 'sandbox id')
    .description("the main process's output")
    .option('-f, --follow', 'keep streaming')
    .option('--tail <N>', 'last N lines')
    .option('--since <TIME>', 'RFC 3339 time or a duration like 10m')
    .option('--from-offset <BYTES>', 'resume at this byte offset')
    .action((ref: string, o: { follow?: boolean; tail?: string; since?: string; fromOffset?: string }) => sandboxActions().then((a) => a.sandboxLogs(ctx, ref, o)));

  sandbox
    .command('cp')
    .argument('<SRC>', 'local path or SANDBOX-ID:/abs/path')
    .argument('<DST>', 'local path or SANDBOX-ID:/abs/path')
    .description('copy a file to or from a sandbox (use - for stdin/stdout)')
    .action((src: string, dst: string) => sandboxActions().then((a) => a.copyFile(ctx, src, dst)));

  sandbox
    .command('stop')
    .argument('[SANDBOX-ID...]', 'sandbox ids')
    .description('stop sandboxes: by id, every one carrying some tags (--tag), or all of them (--all)')
    .option('--grace <SECONDS>', 'grace period before SIGKILL (0 = at once)')
    .option('--missing-ok', 'succeed for sandboxes that do not exist')
    .option('--tag <TAG...>', 'every live sandbox carrying all of these tags')
    .option('--all', "every live sandbox of the organization")
    .action((refs: string[], o: StopFlags) => sandboxActions().then((a) => a.stopSandboxes(ctx, refs, o)));

  sandbox
    .command('pause')
    .argument('<SANDBOX-ID>', 'sandbox id')
    .description('freeze a sandbox: its processes keep their memory, its lifetime stops; any exec, file or log call resumes it')
    .action((ref: string) => sandboxActions().then((a) => a.pauseSandbox(ctx, ref, true)));

  sandbox
    .command('resume')
    .argument('<SANDBOX-ID>', 'sandbox id')
    .description('resume a paused sandbox where it stopped')
    .action((ref: string) => sandboxActions().then((a) => a.pauseSandbox(ctx, ref, false)));

  sandbox
    .command('snapshot')
    .argument('<SANDBOX-ID>', 'sandbox id')
    .description("snapshot a sandbox's disk (restore it with volumes[].scratch.restoreFromSnapshotId)")
    .option('--volume <NAME>', 'the volume to capture', 'workspace')
    .option('--request-id <ID>', 'idempotency key')
    .option('--no-wait', 'return while the snapshot is still being created')
    .option('-o, --output <FORMAT>', 'table|json|yaml|name', 'table')
    .action((ref: string, o: SnapshotFlags) => sandboxActions().then((a) => a.snapshotSandbox(ctx, ref, o)));

  sandbox
    .command('explain')
    .description('which runner would take a spec, and why the others would not')
    .requiredOption('-f, --file <FILE>', 'sandbox spec (YAML or JSON), or -')
    .option('-o, --output <FORMAT>', 'table|json', 'table')
    .action((o: { file: string; output?: string }) => sandboxActions().then((a) => a.explainPlacement(ctx, o)));
}
