export { MaintenanceModule } from './maintenance.module';
export { MaintenanceScheduler, type MaintenanceTickResult } from './maintenance.scheduler';
export { MaintenanceRunners, type MaintenanceCandidate } from './maintenance.port';
export { mayStartUpdate, insideWindow, insideExclusion, lastWindowStart } from './maintenance-window';
export type { MaintenancePolicy, MaintenanceWindow, MaintenanceExclusion, UpdateStartVerdict } from './maintenance-window';
