import { Body, Controller, Delete, Get, HttpCode, Param, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiBody, ApiOperation, ApiTags } from '@nestjs/swagger';
import { openApiSchema } from '../../infrastructure/http/openapi';
import { PaddockError } from '@paddock/contracts';
import { parseRequest } from '../../infrastructure/http/validation';
import { CurrentCaller, RequireOperator, RequireRole } from './auth.decorators';
import type { AuthenticatedCaller } from './caller';
import { CreateOrganizationRequestSchema, CreateTokenRequestSchema, UuidSchema } from './identity.schemas';
import { TokensService, type ApiTokenView, type IssuedToken, type OrganizationView } from './tokens.service';

const tokenNotFound = (id: string): PaddockError => new PaddockError('not_found', `token "${id}" not found`);

@ApiTags('tokens')
@ApiBearerAuth()
@Controller('v1/tokens')
export class TokensController {
  constructor(private readonly tokens: TokensService) {}

  @Post()
  @HttpCode(200)
  @RequireRole('SANDBOX_ADMIN')
  @ApiOperation({ summary: 'Create an API token in the caller\'s organization; the secret is returned once.' })
  @ApiBody({ schema: openApiSchema(CreateTokenRequestSchema) })
  async createToken(@CurrentCaller() caller: AuthenticatedCaller, @Body() body: unknown): Promise<IssuedToken> {
    const req = parseRequest(CreateTokenRequestSchema, body ?? {});
    return this.tokens.issue(caller.organizationId, req.name, req.role);
  }

  @Get()
  @RequireRole('SANDBOX_ADMIN')
  @ApiOperation({ summary: 'List the organization\'s tokens (no secrets).' })
  async listTokens(@CurrentCaller() caller: AuthenticatedCaller): Promise<{ tokens: ApiTokenView[] }> {
    return { tokens: await this.tokens.list(caller.organizationId) };
  }

  @Delete(':id')
  @RequireRole('SANDBOX_ADMIN')
  @ApiOperation({ summary: 'Revoke a token. Takes effect everywhere within the token cache TTL.' })
  async revokeToken(@CurrentCaller() caller: AuthenticatedCaller, @Param('id') id: string): Promise<ApiTokenView> {
    if (!UuidSchema.safeParse(id).success) throw tokenNotFound(id);
    return this.tokens.revoke(caller.organizationId, id);
  }
}

@ApiTags('auth')
@ApiBearerAuth()
@Controller('v1/auth')
export class AuthController {
  constructor(private readonly tokens: TokensService) {}

  @Get('whoami')
  @ApiOperation({ summary: 'The caller\'s organization, role and token (used by `cwic auth whoami`).' })
  async whoami(@CurrentCaller() caller: AuthenticatedCaller): Promise<{
    organization: OrganizationView;
    role: string;
    token: { id: string; name: string };
    operator: boolean;
  }> {
    return {
      organization: await this.tokens.organization(caller.organizationId),
      role: caller.role,
      token: { id: caller.tokenId, name: caller.tokenName },
      operator: caller.operator,
    };
  }
}

@ApiTags('organizations')
@ApiBearerAuth()
@Controller('v1/organizations')
export class OrganizationsController {
  constructor(private readonly tokens: TokensService) {}

  @Post()
  @HttpCode(200)
  @RequireOperator()
  @ApiOperation({ summary: 'Operator only: create an organization and its first admin token (shown once).' })
  @ApiBody({ schema: openApiSchema(CreateOrganizationRequestSchema) })
  async createOrganization(@Body() body: unknown): Promise<OrganizationView & { adminToken: IssuedToken }> {
    const req = parseRequest(CreateOrganizationRequestSchema, body ?? {});
    const { organization, adminToken } = await this.tokens.createOrganization(req.name);
    return { ...organization, adminToken };
  }
}
