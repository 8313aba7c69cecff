import type { Command } from 'commander';
import type { Ctx } from '../context';
import { policyActions } from '../lazy';

/** Declarations only: the work is in `../actions/policy`, loaded when a command runs (see `../lazy`). */
export function registerPolicyCommands(runner: Command, ctx: Ctx): void {
  const policy = runner.command('policy').description("read and replace a runner's policy");
  policy
    .command('get')
    .argument('<RUNNER-ID>', 'runner id or UUID')
    .description('export the policy (without its etag; -o json prints null when none is configured)')
    .option('-o, --output <FORMAT>', 'yaml (snake_case, default) | json')
    .action((id: string, o: { output?: string }) => policyActions().then((a) => a.policyGet(ctx, id, o)));
  policy
    .command('describe')
    .argument('<RUNNER-ID>', 'runner id or UUID')
    .description('show the policy with its etag')
    .option('-o, --output <FORMAT>', 'json')
    .action((id: string, o: { output?: string }) => policyActions().then((a) => a.policyDescribe(ctx, id, o)));
  policy
    .command('edit')
    .argument('<RUNNER-ID>', 'runner id or UUID')
    .description('replace the policy ($EDITOR, or -f FILE|-); pin the revision with --etag')
    .option('-f, --file <FILE>', 'policy document (or {policy, etag}), or - for stdin')
    .option('--etag <TOKEN>', 'etag of the read the document is based on')
    .option('--print-template', 'print the policy with its etag')
    .action((id: string, o: { file?: string; etag?: string; printTemplate?: boolean }) => policyActions().then((a) => a.policyEdit(ctx, id, o)));
  policy
    .command('validate')
    .description('validate a policy document offline with the policy engine')
    .requiredOption('-f, --file <FILE>', 'policy document, or -')
    .action((o: { file: string }) => policyActions().then((a) => a.policyValidate(ctx, o)));
}
