import { ESLint } from 'eslint';
import { REPO_ROOT } from '@paddock/testing';

/**
 * The layering rules of the root ESLint config (run by every package's lint, so by `pnpm test`)
 * refuse what they exist to refuse: each case lints code as if it were the named file.
 */
describe('layering rules', () => {
  const eslint = new ESLint({ cwd: REPO_ROOT });
  const refusals = async (filePath: string, code: string): Promise<string[]> => {
    const [r] = await eslint.lintText(code, { filePath });
    return (r?.messages ?? []).filter((m) => m.ruleId === 'no-restricted-imports').map((m) => `${m.line}: ${m.message.split(' import is restricted')[0] ?? ''}`);
  };

  it('an app never imports another app, by name or by path', async () => {
    const code = "import { startRunner } from '@paddock/runner';\nimport { x } from '../../runner/src/runner';\nimport { PaddockError } from '@paddock/contracts';\nexport const y = [startRunner, x, PaddockError];\n";
    expect(await refusals('apps/gateway/src/main.ts', code)).toEqual(["1: '@paddock/runner'", "2: '../../runner/src/runner'"]);
  });

  it('a package never imports an app', async () => {
    expect(await refusals('packages/kit/src/index.ts', "import { createGateway } from '@paddock/gateway';\nexport const y = createGateway;\n")).toEqual(["1: '@paddock/gateway'"]);
  });

  it("the policy engine's core does no I/O, neither itself nor through its CLI; the CLI may read files", async () => {
    const code = "import { readFileSync } from 'node:fs';\nimport { connect } from '@nats-io/transport-node';\nimport { main } from './cli';\nexport const y = [readFileSync, connect, main];\n";
    expect(await refusals('packages/policy/src/index.ts', code)).toEqual(["1: 'node:fs'", "2: '@nats-io/transport-node'", "3: './cli'"]);
    expect(await refusals('packages/policy/src/cli.ts', "import { readFileSync } from 'node:fs';\nexport const y = readFileSync;\n")).toEqual([]);
  });
});
