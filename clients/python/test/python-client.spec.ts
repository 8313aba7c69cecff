import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startPythonPlatform, type PythonPlatform } from './support/platform';
import { CLIENT_SRC, PYTHON, pythonSync, runCommand } from './support/python';

interface Outcome {
  outcome: 'passed' | 'failed' | 'skipped';
  seconds: number;
  detail: string;
}

/** The unittest ids, found without running anything (each becomes one test here). */
function listTests(): string[] {
  const r = pythonSync(['tests/run.py', '--list']);
  if (r.code !== 0) throw new Error(`listing the Python tests failed:\n${r.output}`);
  return r.output.split('\n').filter((l) => l.startsWith('tests.'));
}

const ids = listTests();

/**
 * The Python client's unittest suite, run once with the system interpreter against the platform
 * started as `pnpm start` starts it; each Python test is reported as its own test.
 */
describe(`python client against a real platform (${PYTHON})`, () => {
  let platform: PythonPlatform | undefined;
  let results: Record<string, Outcome> = {};
  let output = '';

  beforeAll(async () => {
    platform = await startPythonPlatform();
    const dir = mkdtempSync(join(tmpdir(), 'paddock-python-'));
    try {
      const json = join(dir, 'results.json');
      const run = await runCommand(PYTHON, ['tests/run.py', '--json', json], {
        env: { ...platform.env, PYTHONPATH: CLIENT_SRC, PYTHONDONTWRITEBYTECODE: '1', PYTHONUNBUFFERED: '1' },
        timeoutMs: 420_000,
      });
      output = run.output;
      try {
        results = JSON.parse(readFileSync(json, 'utf8')) as Record<string, Outcome>;
      } catch {
        results = {};
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 600_000);

  afterAll(async () => {
    await platform?.stop();
  });

  it('finds the suite', () => {
    expect(ids.length).toBeGreaterThan(50);
  });

  it.each(ids)('%s', (id) => {
    const r = results[id];
    if (!r) {
      // A class-level failure (setUpClass) is recorded under its own name, not the test's.
      const classWide = Object.entries(results)
        .filter(([k, v]) => !ids.includes(k) && v.outcome !== 'passed')
        .map(([k, v]) => `${k}:\n${v.detail}`)
        .join('\n');
      throw new Error(`${id} has no result.\n${classWide}\n--- runner output (tail) ---\n${output.slice(-6000)}`);
    }
    if (r.outcome !== 'passed') throw new Error(`${id} ${r.outcome} (${r.seconds} s):\n${r.detail}`);
    expect(r.outcome).toBe('passed');
  });
});
