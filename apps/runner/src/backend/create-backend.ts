import { join } from 'node:path';
import type { RunnerEnv } from '../config/env';
import { LocalBackend } from './local';
import type { SandboxBackend } from './sandbox-backend';

/** Picks the backend named by `PADDOCK_RUNNER_BACKEND`. */
export function createBackend(env: RunnerEnv, runnerId: string): SandboxBackend {
  switch (env.PADDOCK_RUNNER_BACKEND) {
    case 'local':
      return new LocalBackend({ runnerId, stateDir: join(env.PADDOCK_RUNNER_STATE_DIR, runnerId) });
    case 'kubernetes':
      throw new Error('PADDOCK_RUNNER_BACKEND=kubernetes is not available in this build yet; use local');
  }
}
