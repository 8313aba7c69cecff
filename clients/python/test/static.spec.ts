import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLIENT_DIR, PYTHON, pythonSync, runCommand } from './support/python';

/** Checks of the package that need no platform: it compiles, it type-checks strictly, it installs. */
describe('python client: static checks', () => {
  let scratch = '';
  beforeAll(() => {
    scratch = mkdtempSync(join(tmpdir(), 'paddock-python-static-'));
  });
  afterAll(() => {
    rmSync(scratch, { recursive: true, force: true });
  });

  it('compiles (python3 -m compileall)', () => {
    const r = pythonSync(['-m', 'compileall', '-q', 'src', 'tests'], { PYTHONPYCACHEPREFIX: join(scratch, 'pycache') });
    expect(r.code, r.output).toBe(0);
  });

  it('type-checks in mypy strict mode, for Python 3.9', async () => {
    const r = await runCommand('mypy', ['--strict', '--python-version', '3.9', '--cache-dir', join(scratch, 'mypy-cache'), 'src/paddock'], { timeoutMs: 180_000 });
    if (r.output.includes('spawn mypy ENOENT')) throw new Error('mypy is not installed: apt-get install mypy');
    expect(r.code, r.output).toBe(0);
    expect(r.output).toContain('Success: no issues found');
  }, 200_000);

  it('installs with pip install --no-build-isolation, typed, with the version of the package', async () => {
    // A copy: a build writes build/ and *.egg-info next to the sources.
    const pkg = join(scratch, 'pkg');
    for (const f of ['pyproject.toml', 'README.md', 'src']) cpSync(join(CLIENT_DIR, f), join(pkg, f), { recursive: true });
    const site = join(scratch, 'site');
    const install = await runCommand(PYTHON, ['-m', 'pip', 'install', '--quiet', '--no-build-isolation', '--no-deps', '--no-index', '--target', site, pkg], {
      timeoutMs: 180_000,
      env: { PIP_DISABLE_PIP_VERSION_CHECK: '1', PIP_ROOT_USER_ACTION: 'ignore' },
    });
    expect(install.code, install.output).toBe(0);
    expect(existsSync(join(site, 'paddock', 'py.typed'))).toBe(true);
    const probe = await runCommand(PYTHON, ['-c', 'import paddock; print(paddock.__file__); print(paddock.__version__)'], {
      timeoutMs: 60_000,
      cwd: scratch,
      env: { PYTHONPATH: site },
    });
    expect(probe.code, probe.output).toBe(0);
    const [file, version] = probe.output.trim().split('\n');
    expect(file).toBe(join(site, 'paddock', '__init__.py'));
    expect(version).toBe(/__version__ = "([^"]+)"/.exec(readFileSync(join(CLIENT_DIR, 'src', 'paddock', '__about__.py'), 'utf8'))?.[1]);
  }, 200_000);
});
