import type { Command } from 'commander';
import type { Ctx } from '../context';

/** Data-plane commands (create, ls, get, exec, sh, logs, cp, stop, explain) go through the gateway. */
export function registerSandboxCommands(_sandbox: Command, _ctx: Ctx): void {}
