import { Global, Injectable, Module } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import type { RunnerConnectionStatus, RunnerInstallReport } from '@paddock/contracts';
import { IntakeRunners, type HeartbeatObservation, type RunnerConnectionState } from './modules/intake/intake.port';
import { MaintenanceRunners, type MaintenanceCandidate } from './modules/maintenance/maintenance.port';
import {
  ApplyAvailableUpdateCommand,
  ApplyInstallReportCommand,
  RecordRunnerConnectionCommand,
  RunnerReadRepository,
  RunnersModule,
} from './modules/runners';

/** The maintenance scheduler's audit identity in event metadata. */
export const MAINTENANCE_ACTOR = 'system:maintenance';

/**
 * Binds the intake and maintenance ports to the runners module (its read repository and its
 * commands), so those modules depend on a small interface rather than on runner internals.
 */
@Injectable()
class RunnersBridge implements IntakeRunners, MaintenanceRunners {
  constructor(
    private readonly read: RunnerReadRepository,
    private readonly commands: CommandBus,
  ) {}

  touchHeartbeat(organizationId: string, runnerId: string, at: Date, observed: HeartbeatObservation): Promise<boolean> {
    return this.read.touchHeartbeat(organizationId, runnerId, at, observed);
  }

  listConnectionStates(): Promise<RunnerConnectionState[]> {
    return this.read.listConnectionStates();
  }

  async recordConnection(organizationId: string, runnerId: string, status: RunnerConnectionStatus, at: Date): Promise<boolean> {
    const row = await this.read.findByRef(organizationId, runnerId);
    if (!row || row.connection_status === status) return false;
    await this.commands.execute(new RecordRunnerConnectionCommand({ organizationId, runnerId, status, at }));
    return true;
  }

  async applyInstallReport(report: RunnerInstallReport): Promise<void> {
    await this.commands.execute(new ApplyInstallReportCommand(report));
  }

  listForMaintenance(): Promise<MaintenanceCandidate[]> {
    return this.read.listForMaintenance();
  }

  async applyAvailableUpdate(organizationId: string, runnerId: string): Promise<void> {
    await this.commands.execute(
      new ApplyAvailableUpdateCommand({ organizationId, runnerId, trigger: 'maintenance', actor: MAINTENANCE_ACTOR }),
    );
  }
}

@Global()
@Module({
  imports: [RunnersModule],
  providers: [
    RunnersBridge,
    { provide: IntakeRunners, useExisting: RunnersBridge },
    { provide: MaintenanceRunners, useExisting: RunnersBridge },
  ],
  exports: [IntakeRunners, MaintenanceRunners],
})
export class RunnersBridgeModule {}
