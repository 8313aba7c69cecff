import type { Command } from 'commander';
import type { Ctx } from '../context';
import { clusterActions } from '../lazy';

/** Declarations only: the work is in `../actions/cluster`, loaded when a command runs (see `../lazy`). */
export function registerClusterCommands(program: Command, ctx: Ctx): void {
  const cluster = program.command('cluster').description("your organization's clusters");
  cluster
    .command('get')
    .alias('ls')
    .description('list clusters (id, name, zone)')
    .option('-o, --output <FORMAT>', 'table|wide|json|yaml|name', 'table')
    .action((o: { output?: string }) => clusterActions().then((a) => a.getClusters(ctx, o)));
}
