import type { Command } from 'commander';
import type { Ctx } from '../context';
import { secretStoreActions } from '../lazy';

/** Declarations only: the work is in `../actions/secret-store`, loaded when a command runs (see `../lazy`). */
export function registerSecretStoreCommands(program: Command, ctx: Ctx): void {
  const store = program.command('secret-store').description("your organization's secret stores (values are write-only)");
  store
    .command('create <name>')
    .description('create an empty secret store')
    .action((name: string) => secretStoreActions().then((a) => a.createStore(ctx, name)));
  store
    .command('get [name]')
    .alias('ls')
    .description('list secret stores, or one store and the paths of its secrets (never their values)')
    .option('-o, --output <FORMAT>', 'table|json|yaml|name', 'table')
    .action((name: string | undefined, o: { output?: string }) => secretStoreActions().then((a) => a.getStores(ctx, name, o)));
  store
    .command('set <name> <path>')
    .description('write one secret: the value is read from stdin (or prompted for, unechoed), never from the command line')
    .action((name: string, path: string) => secretStoreActions().then((a) => a.setSecret(ctx, name, path)));
  store
    .command('unset <name> <path>')
    .description('remove one secret from a store')
    .action((name: string, path: string) => secretStoreActions().then((a) => a.unsetSecret(ctx, name, path)));
  store
    .command('delete <name>')
    .description('delete a secret store and every secret in it')
    .option('--allow-missing', 'succeed when the store does not exist')
    .action((name: string, o: { allowMissing?: boolean }) => secretStoreActions().then((a) => a.deleteStore(ctx, name, o)));
}
