import { Module, type DynamicModule } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { CqrsModule } from '@nestjs/cqrs';
import { PaddockErrorFilter } from './infrastructure/http/error.filter';
import { InfrastructureModule, type InfrastructureOptions } from './infrastructure/infrastructure.module';
import { ClustersModule } from './modules/clusters';
import { HealthModule } from './modules/health';
import { IdentityModule } from './modules/identity';
import { IntakeModule } from './modules/intake';
import { MaintenanceModule } from './modules/maintenance';
import { NatsCredentialsModule } from './modules/nats-credentials';
import { ReleasesModule } from './modules/releases';
import { RunnersModule } from './modules/runners';
import { SecretStoresModule } from './modules/secret-stores';
import { RunnersBridgeModule } from './runners-bridge.module';

export type AppModuleOptions = InfrastructureOptions;

@Module({})
export class AppModule {
  static forRoot(opts: AppModuleOptions): DynamicModule {
    return {
      module: AppModule,
      imports: [
        InfrastructureModule.forRoot(opts),
        CqrsModule.forRoot(),
        HealthModule,
        IdentityModule,
        ClustersModule,
        ReleasesModule,
        RunnersModule,
        RunnersBridgeModule,
        IntakeModule,
        MaintenanceModule,
        NatsCredentialsModule,
        SecretStoresModule,
      ],
      providers: [{ provide: APP_FILTER, useClass: PaddockErrorFilter }],
    };
  }
}
