import { Controller, HttpCode, Param, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { IssuedNatsCredentialsSchema, type IssuedNatsCredentials } from '@paddock/contracts';
import { openApiSchema } from '../../infrastructure/http/openapi';
import { CurrentCaller, RequireRole } from '../identity/auth.decorators';
import type { AuthenticatedCaller } from '../identity/caller';
import { NatsCredentialsService } from './nats-credentials.service';

@ApiTags('clusters')
@ApiBearerAuth()
@Controller('v1/clusters')
export class NatsCredentialsController {
  constructor(private readonly credentials: NatsCredentialsService) {}

  @Post(':cluster/natsCredentials')
  @HttpCode(200)
  @RequireRole('SANDBOX_ADMIN')
  @ApiOperation({
    summary: "Issue the NATS credentials of a cluster's controller (its `.creds` file content, shown once).",
    description: 'The controller may then publish install reports and ask for runner credentials for this cluster only.',
  })
  @ApiOkResponse({ schema: openApiSchema(IssuedNatsCredentialsSchema, 'output') })
  async issueControllerCredentials(@CurrentCaller() caller: AuthenticatedCaller, @Param('cluster') cluster: string): Promise<IssuedNatsCredentials> {
    return this.credentials.forController(caller.organizationId, cluster);
  }
}
