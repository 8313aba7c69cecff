export { IntakeModule } from './intake.module';
export { RunnerIntakeService } from './runner-intake.service';
export { IntakeRunners, type RunnerConnectionState, type HeartbeatObservation, type RunnerConnectionNotice } from './intake.port';
