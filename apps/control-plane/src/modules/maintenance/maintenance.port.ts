import type { MaintenancePolicy } from './maintenance-window';

export interface MaintenanceCandidate {
  organizationId: string;
  runnerId: string;
  updateAvailable: boolean;
  maintenancePolicy: MaintenancePolicy | null | undefined;
}

/** What the scheduler needs from the runners module (bound in runners-bridge.ts). */
export abstract class MaintenanceRunners {
  abstract listForMaintenance(): Promise<MaintenanceCandidate[]>;
  abstract applyAvailableUpdate(organizationId: string, runnerId: string): Promise<void>;
}
