import { Global, Module } from '@nestjs/common';
import { ClustersController } from './clusters.controller';
import { ClustersRepository } from './clusters.repository';
import { ClustersService } from './clusters.service';

@Global()
@Module({
  controllers: [ClustersController],
  providers: [ClustersRepository, ClustersService],
  exports: [ClustersService],
})
export class ClustersModule {}
