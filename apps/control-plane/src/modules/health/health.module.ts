import { Global, Module } from '@nestjs/common';
import { HealthController } from './health.controller';
import { Metrics } from './metrics';
import { OpenApiDocument } from './openapi-document';

@Global()
@Module({
  controllers: [HealthController],
  providers: [Metrics, OpenApiDocument],
  exports: [Metrics, OpenApiDocument],
})
export class HealthModule {}
