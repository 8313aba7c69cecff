export { createControlPlane, buildOpenApi, type ControlPlane } from './control-plane';
export { AppConfig, parseEnv, EnvSchema, type Env } from './config';
export type { CpDatabase } from './db/database';
export { migrateControlPlane } from './db/migrations';
