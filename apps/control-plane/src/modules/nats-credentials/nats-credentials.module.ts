import { Module } from '@nestjs/common';
import { AppConfig } from '../../config/app-config';
import { NatsCredentialsController } from './nats-credentials.controller';
import { issuerFromConfig, NATS_ISSUER, NatsCredentialsService } from './nats-credentials.service';
import { RunnerCredentialsResponder } from './runner-credentials.responder';

/** Issues NATS users of the runner and controller roles (see README "NATS credentials"). */
@Module({
  controllers: [NatsCredentialsController],
  providers: [
    { provide: NATS_ISSUER, useFactory: issuerFromConfig, inject: [AppConfig] },
    NatsCredentialsService,
    RunnerCredentialsResponder,
  ],
})
export class NatsCredentialsModule {}
