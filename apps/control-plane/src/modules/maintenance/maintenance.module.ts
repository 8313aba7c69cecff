import { Module } from '@nestjs/common';
import { MaintenanceScheduler } from './maintenance.scheduler';

/** Needs a MaintenanceRunners provider in scope (see runners-bridge.module.ts). */
@Module({
  providers: [MaintenanceScheduler],
  exports: [MaintenanceScheduler],
})
export class MaintenanceModule {}
