import { Command, CommanderError } from 'commander';
import { registerAuthCommands } from './commands/auth';
import { registerClusterCommands } from './commands/cluster';
import { registerCompletionCommands } from './commands/completion';
import { registerPolicyCommands } from './commands/policy';
import { registerRunnerCommands } from './commands/runner';
import { registerSandboxCommands } from './commands/sandbox';
import { registerSecretStoreCommands } from './commands/secret-store';
import { Ctx, processIo, type Io } from './context';
import { CliError, EXIT } from './errors';

export const VERSION = '0.1.0';

export function buildProgram(io: Io): { program: Command; ctx: Ctx } {
  const program = new Command('cwic');
  const ctx = new Ctx(io, {});
  program
    .description('Paddock command line: runners, policies, clusters and sandboxes')
    .version(VERSION, '-v, --version')
    .option('--control-plane-url <URL>', 'control plane URL (overrides PADDOCK_CONTROL_PLANE_URL and the config file)')
    .option('--gateway-url <URL>', 'gateway URL (overrides PADDOCK_GATEWAY_URL and the config file)')
    .configureOutput({ writeOut: (s) => io.stdout(s), writeErr: (s) => io.stderr(s) })
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride()
    .hook('preAction', (root) => {
      const o = root.opts<{ controlPlaneUrl?: string; gatewayUrl?: string }>();
      ctx.flags.controlPlaneUrl = o.controlPlaneUrl;
      ctx.flags.gatewayUrl = o.gatewayUrl;
    });
  registerAuthCommands(program, ctx);
  registerClusterCommands(program, ctx);
  registerSecretStoreCommands(program, ctx);
  const sandbox = program.command('sandbox').description('sandboxes and the runners that host them');
  const runner = registerRunnerCommands(sandbox, ctx);
  registerPolicyCommands(runner, ctx);
  registerSandboxCommands(sandbox, ctx);
  registerCompletionCommands(program, ctx);
  // Subcommands inherit the exit override and output routing.
  const propagate = (c: Command): void => {
    for (const sub of c.commands) {
      sub.exitOverride().configureOutput({ writeOut: (s) => io.stdout(s), writeErr: (s) => io.stderr(s) });
      propagate(sub);
    }
  };
  propagate(program);
  return { program, ctx };
}

/** Runs the CLI and returns the exit code (never calls process.exit itself). */
export async function run(argv: string[], io: Io = processIo()): Promise<number> {
  const { program } = buildProgram(io);
  try {
    await program.parseAsync(argv, { from: 'user' });
    return EXIT.ok;
  } catch (e) {
    if (e instanceof CommanderError) {
      if (e.code === 'commander.helpDisplayed' || e.code === 'commander.version' || e.code === 'commander.help') return EXIT.ok;
      if (e.code === 'commander.executeSubCommandAsync') return EXIT.ok;
      return EXIT.usage;
    }
    if (e instanceof CliError) {
      // An empty message carries a command's own exit code (`cwic sandbox exec` passes it through).
      if (e.message) io.stderr(`Error: ${e.message}\n`);
      return e.exitCode;
    }
    io.stderr(`Error: ${e instanceof Error ? e.message : String(e)}\n`);
    return EXIT.refused;
  }
}
