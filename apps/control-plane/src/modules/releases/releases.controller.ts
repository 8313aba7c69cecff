import { Body, Controller, Get, HttpCode, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiBody, ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import { openApiSchema } from '../../infrastructure/http/openapi';
import { parseRequest } from '../../infrastructure/http/validation';
import { RequireOperator, RequireRole } from '../identity/auth.decorators';
import { ReleaseCatalog } from './release-catalog';
import { PublishReleaseRequestSchema, ReleaseChannelQuerySchema, type Release } from './releases.schemas';

@ApiTags('releases')
@ApiBearerAuth()
@Controller('v1/sandbox/releases')
export class ReleasesController {
  constructor(private readonly catalog: ReleaseCatalog) {}

  @Get()
  @RequireRole('SANDBOX_USER')
  @ApiOperation({ summary: 'Runner releases, newest first; optional `channel` filter.' })
  @ApiQuery({ name: 'channel', required: false, schema: openApiSchema(ReleaseChannelQuerySchema) })
  async listReleases(@Query('channel') channel?: string): Promise<{ releases: Release[] }> {
    const ch = channel === undefined ? undefined : parseRequest(ReleaseChannelQuerySchema, channel, 'channel');
    return { releases: await this.catalog.list(ch) };
  }

  @Post()
  @HttpCode(200)
  @RequireOperator()
  @ApiOperation({ summary: 'Operator only: publish a runner release on a channel.' })
  @ApiBody({ schema: openApiSchema(PublishReleaseRequestSchema) })
  async publishRelease(@Body() body: unknown): Promise<Release> {
    return this.catalog.publish(parseRequest(PublishReleaseRequestSchema, body ?? {}));
  }
}
