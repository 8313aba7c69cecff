import { Module, type DynamicModule, type Provider } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { AuthGuard } from './http/auth.guard';
import { PaddockErrorFilter } from './http/error.filter';
import { HealthController } from './http/health.controller';
import { SandboxesController } from './http/sandboxes.controller';
import { SnapshotsController } from './snapshots/snapshots.controller';

/** Nest is only the shell: the composition root (`createGateway`) hands in ready-made objects. */
@Module({})
export class GatewayModule {
  static register(values: Provider[]): DynamicModule {
    return {
      module: GatewayModule,
      controllers: [SandboxesController, SnapshotsController, HealthController],
      providers: [...values, AuthGuard, { provide: APP_FILTER, useClass: PaddockErrorFilter }],
    };
  }
}
