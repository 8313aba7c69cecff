import { Module } from '@nestjs/common';
import { RunnerIntakeService } from './runner-intake.service';

/** Needs an IntakeRunners provider in scope (see runners-bridge.module.ts). */
@Module({
  providers: [RunnerIntakeService],
  exports: [RunnerIntakeService],
})
export class IntakeModule {}
