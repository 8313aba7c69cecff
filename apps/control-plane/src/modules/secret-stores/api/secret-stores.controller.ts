import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiBody, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import {
  CreateSecretStoreRequestSchema,
  ListSecretStoresResponseSchema,
  SecretStoreSchema,
  UpdateSecretStoreRequestSchema,
  type ListSecretStoresResponse,
  type SecretStore,
} from '@paddock/contracts';
import { openApiSchema } from '../../../infrastructure/http/openapi';
import { parseRequest } from '../../../infrastructure/http/validation';
import { CurrentCaller, RequireRole } from '../../identity/auth.decorators';
import type { AuthenticatedCaller } from '../../identity/caller';
import { SecretStoresService } from '../application/secret-stores.service';

const truthy = (v: unknown): boolean => ['true', '1'].includes(String(Array.isArray(v) ? v[0] : (v ?? '')).toLowerCase());

/** Writes are admin-only; reads (which never carry values) are open to the organization's users. */
@ApiTags('settings')
@ApiBearerAuth()
@Controller('v1/settings/secretStores')
export class SecretStoresController {
  constructor(private readonly stores: SecretStoresService) {}

  @Post()
  @HttpCode(200)
  @RequireRole('SANDBOX_ADMIN')
  @ApiOperation({ summary: 'Create a secret store, optionally with its first secrets (values are write-only).' })
  @ApiBody({ schema: openApiSchema(CreateSecretStoreRequestSchema) })
  @ApiOkResponse({ schema: openApiSchema(SecretStoreSchema, 'output') })
  create(@CurrentCaller() caller: AuthenticatedCaller, @Body() body: unknown): Promise<SecretStore> {
    return this.stores.create(caller.organizationId, parseRequest(CreateSecretStoreRequestSchema, body ?? {}));
  }

  @Get()
  @RequireRole('SANDBOX_USER')
  @ApiOperation({ summary: "List the organization's secret stores and the paths of their secrets." })
  @ApiOkResponse({ schema: openApiSchema(ListSecretStoresResponseSchema, 'output') })
  async list(@CurrentCaller() caller: AuthenticatedCaller): Promise<ListSecretStoresResponse> {
    return { secretStores: await this.stores.list(caller.organizationId) };
  }

  @Get(':name')
  @RequireRole('SANDBOX_USER')
  @ApiOperation({ summary: 'Get one secret store: its secrets by path, never their values.' })
  @ApiOkResponse({ schema: openApiSchema(SecretStoreSchema, 'output') })
  get(@CurrentCaller() caller: AuthenticatedCaller, @Param('name') name: string): Promise<SecretStore> {
    return this.stores.get(caller.organizationId, name);
  }

  @Patch(':name')
  @RequireRole('SANDBOX_ADMIN')
  @ApiOperation({ summary: 'Write (add or replace by path) and remove secrets of a store.' })
  @ApiBody({ schema: openApiSchema(UpdateSecretStoreRequestSchema) })
  @ApiOkResponse({ schema: openApiSchema(SecretStoreSchema, 'output') })
  update(@CurrentCaller() caller: AuthenticatedCaller, @Param('name') name: string, @Body() body: unknown): Promise<SecretStore> {
    return this.stores.update(caller.organizationId, name, parseRequest(UpdateSecretStoreRequestSchema, body ?? {}));
  }

  @Delete(':name')
  @HttpCode(200)
  @RequireRole('SANDBOX_ADMIN')
  @ApiOperation({ summary: 'Delete a secret store and every secret in it (`allowMissing`: a missing store is not an error).' })
  async remove(@CurrentCaller() caller: AuthenticatedCaller, @Param('name') name: string, @Query() query: Record<string, unknown>): Promise<Record<string, never>> {
    await this.stores.delete(caller.organizationId, name, truthy(query.allowMissing ?? query.allow_missing));
    return {};
  }
}
