import { Global, Module } from '@nestjs/common';
import { ReleaseCatalog } from './release-catalog';
import { ReleasesController } from './releases.controller';

@Global()
@Module({
  controllers: [ReleasesController],
  providers: [ReleaseCatalog],
  exports: [ReleaseCatalog],
})
export class ReleasesModule {}
