import type { RunnerEnv } from '../config/env';
import type { SandboxBackend } from './sandbox-backend';
/** Picks the backend named by `PADDOCK_RUNNER_BACKEND`. */
export declare function createBackend(env: RunnerEnv, runnerId: string): SandboxBackend;
