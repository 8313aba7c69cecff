import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from '@paddock/testing';
import { startPlatformWithLocalRunner, type Platform } from '../src/platform';

/** The fenced code blocks of one language in the section that starts at `heading`. */
function blocksUnder(markdownFile: string, heading: string, lang: string): string[] {
  const text = readFileSync(join(REPO_ROOT, markdownFile), 'utf8');
  const start = text.indexOf(`\n${heading}\n`);
  if (start < 0) throw new Error(`${markdownFile} has no section "${heading}"`);
  const level = /^#+/.exec(heading)?.[0].length ?? 2;
  const rest = text.slice(start + heading.length + 2);
  const next = rest.search(new RegExp(`\\n#{1,${level}} `));
  const section = next < 0 ? rest : rest.slice(0, next);
  return [...section.matchAll(new RegExp(`\`\`\`${lang}\\n([\\s\\S]*?)\`\`\``, 'g'))].map((m) => m[1] ?? '');
}

function run(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = process.env): { code: number; out: string } {
  const r = spawnSync(cmd, args, { cwd, env, encoding: 'utf8', timeout: 180_000 });
  return { code: r.status ?? -1, out: `${r.stdout}${r.stderr}` };
}

/**
 * The SDK as a user's own project gets it: packed from the checkout, installed with npm into an
 * empty project outside the monorepo, and the READMEs' quick starts run as printed against the
 * platform, as `.mjs` on Node 20 and as TypeScript compiled with tsc.
 */
describe('the SDK in a project of its own', () => {
  let p: Platform;
  let project: string;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    p = await startPlatformWithLocalRunner();
    project = mkdtempSync(join(tmpdir(), 'paddock-sdk-user-'));
    const packed = run('pnpm', ['--filter', '@paddock/sdk', 'pack', '--pack-destination', project], REPO_ROOT);
    expect(packed.code, packed.out).toBe(0);
    const tarball = readdirSync(project).find((f) => f.endsWith('.tgz'));
    expect(tarball).toMatch(/^paddock-sdk-\d+\.\d+\.\d+\.tgz$/);
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'user-project', version: '1.0.0', private: true }));
    const installed = run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', `./${tarball ?? ''}`], project);
    expect(installed.code, installed.out).toBe(0);
    env = { PATH: process.env.PATH, HOME: project, PADDOCK_GATEWAY_URL: p.gw.url, PADDOCK_API_KEY: p.token };
  }, 600_000);

  afterAll(async () => {
    await p?.stop();
    if (project) rmSync(project, { recursive: true, force: true });
  });

  it('installs with no workspace-only dependency', () => {
    const manifest = JSON.parse(readFileSync(join(project, 'node_modules', '@paddock', 'sdk', 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    expect(Object.keys(manifest.dependencies)).toEqual(['ws']);
    expect(Object.values(manifest.dependencies).some((v) => v.startsWith('workspace:') || v.startsWith('catalog:'))).toBe(false);
  });

  it("runs the root README's quick start as printed, as quickstart.mjs", () => {
    const [code] = blocksUnder('README.md', '### Sandboxes from JavaScript or TypeScript (SDK quick start)', 'js');
    writeFileSync(join(project, 'quickstart.mjs'), code ?? '');
    const r = run(process.execPath, ['quickstart.mjs'], project, env);
    expect(r.code, r.out).toBe(0);
    expect(r.out).toContain('0 42\n');
    expect(r.out).toContain('hello');
  });

  it("runs the SDK README's JavaScript quick start as .mjs and its TypeScript one compiled with tsc", () => {
    const [js] = blocksUnder('packages/sdk/README.md', '## Quick start', 'js');
    writeFileSync(join(project, 'sdk-quickstart.mjs'), js ?? '');
    const plain = run(process.execPath, ['sdk-quickstart.mjs'], project, env);
    expect(plain.code, plain.out).toBe(0);
    expect(plain.out).toBe('0 hello\n\nhi\n');

    const [ts] = blocksUnder('packages/sdk/README.md', '## Quick start', 'ts');
    writeFileSync(join(project, 'typed-quickstart.mts'), ts ?? '');
    writeFileSync(
      join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, lib: ['ES2022', 'ESNext.Disposable'], typeRoots: [join(REPO_ROOT, 'node_modules', '@types')], types: ['node'], skipLibCheck: false },
        files: ['typed-quickstart.mts'],
      }),
    );
    const compiled = run(join(REPO_ROOT, 'node_modules', '.bin', 'tsc'), ['-p', 'tsconfig.json'], project);
    expect(compiled.code, compiled.out).toBe(0);
    const typed = run(process.execPath, ['typed-quickstart.mjs'], project, env);
    expect(typed.code, typed.out).toBe(0);
    expect(typed.out).toContain('hello\n0 oops\n');
    expect(typed.out).toContain('piped\nhi\n');
    expect(typed.out).toContain('/tmp/hello.txt');
  });
});
