import { Body, Controller, Get, HttpCode, Param, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiBody, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ClusterSchema, ListClustersResponseSchema, RegisterClusterRequestSchema, type Cluster, type ListClustersResponse } from '@paddock/contracts';
import { openApiSchema } from '../../infrastructure/http/openapi';
import { parseRequest } from '../../infrastructure/http/validation';
import { CurrentCaller, RequireRole } from '../identity/auth.decorators';
import type { AuthenticatedCaller } from '../identity/caller';
import { ClustersService } from './clusters.service';

@ApiTags('clusters')
@ApiBearerAuth()
@Controller('v1/clusters')
export class ClustersController {
  constructor(private readonly clusters: ClustersService) {}

  @Post()
  @HttpCode(200)
  @RequireRole('SANDBOX_ADMIN')
  @ApiOperation({ summary: 'Register a cluster (idempotent by name within the organization).' })
  @ApiBody({ schema: openApiSchema(RegisterClusterRequestSchema) })
  @ApiOkResponse({ schema: openApiSchema(ClusterSchema, 'output') })
  async registerCluster(@CurrentCaller() caller: AuthenticatedCaller, @Body() body: unknown): Promise<Cluster> {
    const req = parseRequest(RegisterClusterRequestSchema, body ?? {});
    return (await this.clusters.register(caller.organizationId, req)).cluster;
  }

  @Get()
  @RequireRole('SANDBOX_USER')
  @ApiOperation({ summary: 'List the organization\'s clusters (`cwic cluster get`).' })
  @ApiOkResponse({ schema: openApiSchema(ListClustersResponseSchema, 'output') })
  async listClusters(@CurrentCaller() caller: AuthenticatedCaller): Promise<ListClustersResponse> {
    return { clusters: await this.clusters.list(caller.organizationId) };
  }

  @Get(':cluster')
  @RequireRole('SANDBOX_USER')
  @ApiOperation({ summary: 'Get one cluster by id or name.' })
  @ApiOkResponse({ schema: openApiSchema(ClusterSchema, 'output') })
  async getCluster(@CurrentCaller() caller: AuthenticatedCaller, @Param('cluster') cluster: string): Promise<Cluster> {
    return this.clusters.get(caller.organizationId, cluster);
  }
}
