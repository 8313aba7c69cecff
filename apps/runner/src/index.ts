export type * from './backend/sandbox-backend';
export { startRunner, type RunnerOptions, type RunningRunner } from './runner';
export { parseRunnerEnv, RunnerEnvSchema, type RunnerEnv } from './config/env';
export { RunnerConfigFileSchema, type RunnerConfigFile } from './config/runner-config-file';
