import { Module } from '@nestjs/common';
import { CqrsModule } from '@nestjs/cqrs';
import { AppConfig } from '../../config';
import { LegacyRunnersController } from './api/legacy-runners.controller';
import { ManagedRunnersController } from './api/managed-runners.controller';
import { ApplyAvailableUpdateHandler } from './application/apply-available-update.handler';
import { ApplyInstallReportHandler } from './application/apply-install-report.handler';
import { CreateManagedRunnerHandler } from './application/create-managed-runner.handler';
import { CreateProfileTemplateHandler } from './application/create-profile-template.handler';
import { DeleteManagedRunnerHandler } from './application/delete-managed-runner.handler';
import { RecordRunnerConnectionHandler } from './application/record-runner-connection.handler';
import { RunnerQueries } from './application/runner-queries';
import { RunnerWriter } from './application/runner-writer';
import { UpdateLegacyRunnerHandler } from './application/update-legacy-runner.handler';
import { UpdateManagedRunnerHandler } from './application/update-managed-runner.handler';
import { ProfileTemplateRepository } from './projections/profile-template.repository';
import { RunnerReadRepository } from './projections/runner-read.repository';
import { PAGE_TOKEN_SECRET } from './runners.tokens';

/**
 * Managed runners: the v1 REST surface, the legacy v1beta2 profile surface, the command handlers
 * the intake and maintenance modules send to, and the `cp_runners` read model.
 */
@Module({
  imports: [CqrsModule],
  controllers: [ManagedRunnersController, LegacyRunnersController],
  providers: [
    RunnerWriter,
    RunnerReadRepository,
    RunnerQueries,
    CreateManagedRunnerHandler,
    UpdateManagedRunnerHandler,
    DeleteManagedRunnerHandler,
    ApplyAvailableUpdateHandler,
    ApplyInstallReportHandler,
    RecordRunnerConnectionHandler,
    ProfileTemplateRepository,
    CreateProfileTemplateHandler,
    UpdateLegacyRunnerHandler,
    {
      // From the injected config only (it reads the env once and generates a key when unset).
      provide: PAGE_TOKEN_SECRET,
      useFactory: (config: AppConfig): string => config.pageTokenSecret,
      inject: [AppConfig],
    },
  ],
  exports: [RunnerReadRepository],
})
export class RunnersModule {}
