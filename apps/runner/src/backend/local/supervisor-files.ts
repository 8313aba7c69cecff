import { cpSync, existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PLAN_SCHEMA_FILE, supervisorPlanJsonSchema } from './supervisor-plan';

/** The supervisor's entry script, in its source directory and in the runner's state directory. */
export const SUPERVISOR_ENTRY = 'supervisor.py';

/**
 * The supervisor's Python sources: `dist/supervisor` in a build (the runner's build copies
 * `apps/runner/supervisor` there), else `apps/runner/supervisor` itself (the runner run from its
 * TypeScript sources: tests, benches).
 */
export function supervisorSourceDir(): string {
  const candidates = [join(__dirname, '..', '..', 'supervisor'), join(__dirname, '..', '..', '..', 'supervisor')];
  const dir = candidates.find((d) => existsSync(join(d, SUPERVISOR_ENTRY)));
  if (!dir) throw new Error(`the supervisor's Python files are missing (looked for ${SUPERVISOR_ENTRY} in ${candidates.join(', ')})`);
  return dir;
}

/**
 * Copies the supervisor into the runner's state directory, with the JSON Schema of the plans this
 * runner writes (emitted from `SupervisorPlanSchema` now, so it is always this runner's), and
 * returns its entry script there. Each runner runs its own copy: the script's path in a process's
 * command line tells this runner's supervisors from any other's, and supervisors already running
 * keep the code they started with when a new runner release rewrites it.
 */
export function installSupervisor(stateDir: string): string {
  cpSync(supervisorSourceDir(), stateDir, { recursive: true, filter: (src) => !src.includes('__pycache__') });
  writeFileSync(join(stateDir, PLAN_SCHEMA_FILE), `${JSON.stringify(supervisorPlanJsonSchema(), null, 2)}\n`, { mode: 0o644 });
  return join(stateDir, SUPERVISOR_ENTRY);
}
