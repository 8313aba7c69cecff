import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { supervisorPlanJsonSchema } from '../../src/backend/local/supervisor-plan';

const APP_DIR = join(__dirname, '..', '..');

/**
 * The supervisor's Python unit tests (`test/supervisor`, `python3 -m unittest`), run with the
 * system Python the supervisors run on, against the plan schema emitted from the runner's zod
 * schema now: renaming a plan field on either side fails here, naming the field.
 */
describe('supervisor (Python)', () => {
  it('passes its unit tests: plan validator, the plan contract with the runner, seccomp program, command lookup', () => {
    const dir = mkdtempSync(join(tmpdir(), 'paddock-plan-schema-'));
    try {
      const schemaFile = join(dir, 'plan.schema.json');
      writeFileSync(schemaFile, JSON.stringify(supervisorPlanJsonSchema()));
      const r = spawnSync('/usr/bin/python3', ['-B', '-m', 'unittest', 'discover', '-s', 'test/supervisor', '-t', 'test/supervisor', '-v'], {
        cwd: APP_DIR,
        env: { PATH: '/usr/bin:/bin', LANG: 'C.UTF-8', PADDOCK_PLAN_SCHEMA: schemaFile },
        encoding: 'utf8',
        timeout: 60_000,
      });
      expect(r.status, r.stderr).toBe(0);
      expect(Number(/^Ran (\d+) tests?/m.exec(r.stderr)?.[1])).toBeGreaterThanOrEqual(11);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
