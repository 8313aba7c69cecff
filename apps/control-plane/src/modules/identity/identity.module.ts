import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { AuthGuard } from './auth.guard';
import { AuthController, OrganizationsController, TokensController } from './identity.controller';
import { IdentityRepository } from './identity.repository';
import { TokenVerifier } from './token-verifier';
import { TokensService } from './tokens.service';

@Module({
  controllers: [TokensController, AuthController, OrganizationsController],
  providers: [IdentityRepository, TokenVerifier, TokensService, { provide: APP_GUARD, useClass: AuthGuard }],
  exports: [TokensService, TokenVerifier],
})
export class IdentityModule {}
