export { RunnersModule } from './runners.module';
export {
  ApplyInstallReportCommand,
  RecordRunnerConnectionCommand,
  ApplyAvailableUpdateCommand,
} from './application/runner.commands';
export { RunnerReadRepository, type RunnerConnectionState, type RunnerMaintenanceCandidate } from './projections/runner-read.repository';
export { PAGE_TOKEN_SECRET } from './runners.tokens';
export type { RunnersTables } from './runners.tables';
