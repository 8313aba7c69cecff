import { Module } from '@nestjs/common';
import { SecretStoresController } from './api/secret-stores.controller';
import { SecretStoresService } from './application/secret-stores.service';
import { SecretStoresRepository } from './infrastructure/secret-stores.repository';
import { SecretsResolveResponder } from './infrastructure/secrets-resolve.responder';

@Module({
  controllers: [SecretStoresController],
  providers: [SecretStoresRepository, SecretStoresService, SecretsResolveResponder],
})
export class SecretStoresModule {}
