import type { Command } from 'commander';
import type { Ctx } from '../context';
import { UsageError } from '../errors';

/**
 * Shell completion without a dependency: each shell script asks `cwic __complete <words...>`,
 * which walks the command tree (the same protocol idea as Cobra's `__complete`).
 */
export function completeWords(program: Command, words: string[]): string[] {
  let cmd = program;
  const done = words.slice(0, -1);
  const current = words[words.length - 1] ?? '';
  for (const w of done) {
    if (w.startsWith('-')) continue;
    const next = cmd.commands.find((c) => c.name() === w || c.aliases().includes(w));
    if (next) cmd = next;
  }
  const candidates = current.startsWith('-')
    ? cmd.options.flatMap((o) => [o.long, o.short].filter((x): x is string => Boolean(x)))
    : cmd.commands.filter((c) => !c.name().startsWith('__')).map((c) => c.name());
  return candidates.filter((c) => c.startsWith(current)).sort();
}

const SCRIPTS: Record<string, string> = {
  bash: `# cwic bash completion: source <(cwic completion bash)
_cwic_complete() {
  local IFS=$'\\n'
  COMPREPLY=( $(cwic __complete "\${COMP_WORDS[@]:1:COMP_CWORD}" 2>/dev/null) )
}
complete -o default -F _cwic_complete cwic
`,
  zsh: `#compdef cwic
# cwic zsh completion: source <(cwic completion zsh)
_cwic() {
  local -a candidates
  candidates=("\${(@f)$(cwic __complete "\${(@)words[2,CURRENT]}" 2>/dev/null)}")
  compadd -a candidates
}
compdef _cwic cwic
`,
  fish: `# cwic fish completion: cwic completion fish | source
complete -c cwic -f -a '(cwic __complete (commandline -opc)[2..-1] (commandline -ct) 2>/dev/null)'
`,
};

export function registerCompletionCommands(program: Command, ctx: Ctx): void {
  program
    .command('completion')
    .argument('<SHELL>', 'bash, zsh or fish')
    .description('print a shell completion script')
    .action((shell: string) => {
      const script = SCRIPTS[shell];
      if (!script) throw new UsageError(`unsupported shell "${shell}": use bash, zsh or fish`);
      ctx.io.stdout(script);
    });
  program
    .command('__complete', { hidden: true })
    .argument('[WORDS...]')
    .allowUnknownOption()
    .action((words: string[] = []) => {
      const out = completeWords(program, words.length ? words : ['']);
      if (out.length) ctx.io.stdout(`${out.join('\n')}\n`);
    });
}
