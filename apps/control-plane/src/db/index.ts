export type { CpDatabase } from './database';
export { migrateControlPlane, controlPlaneMigrations } from './migrations';
export { ensureDatabaseExists } from './create-database';
