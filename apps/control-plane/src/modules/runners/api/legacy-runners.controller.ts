import { Body, Controller, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { PaddockError, type ProfileTemplate } from '@paddock/contracts';
import { CurrentCaller, RequireRole, type Caller } from '../../identity';
import { parseLegacyUpdate, parseProfileTemplate } from '../application/legacy-input';
import { CreateProfileTemplateCommand, UpdateLegacyRunnerCommand } from '../application/runner.commands';
import { RunnerQueries, type RawQuery } from '../application/runner-queries';
import { ProfileTemplateRepository } from '../projections/profile-template.repository';

/** The legacy v1beta2 surface, kept for clients that predate v1: profile templates and runner profile settings. */
@Controller('v1beta2/sandbox')
@RequireRole('SANDBOX_ADMIN')
export class LegacyRunnersController {
  constructor(
    private readonly commands: CommandBus,
    private readonly queries: RunnerQueries,
    private readonly templates: ProfileTemplateRepository,
  ) {}

  @Get('managed-runners/:id')
  get(@CurrentCaller() caller: Caller, @Param('id') id: string): Promise<Record<string, unknown>> {
    return this.queries.getLegacy(caller.organizationId, id);
  }

  @Patch('managed-runners/:id')
  update(@CurrentCaller() caller: Caller, @Param('id') id: string, @Body() body: unknown, @Query() query: RawQuery): Promise<Record<string, unknown>> {
    const mask = query.updateMask ?? query.update_mask;
    const input = parseLegacyUpdate(body, Array.isArray(mask) ? mask.join(',') : mask);
    return this.commands.execute(new UpdateLegacyRunnerCommand(caller, id, input));
  }

  @Post('profile-templates')
  @HttpCode(200)
  createTemplate(@CurrentCaller() caller: Caller, @Body() body: unknown): Promise<ProfileTemplate> {
    return this.commands.execute(new CreateProfileTemplateCommand(caller, parseProfileTemplate(body)));
  }

  @Get('profile-templates')
  async listTemplates(@CurrentCaller() caller: Caller): Promise<{ profileTemplates: ProfileTemplate[] }> {
    return { profileTemplates: await this.templates.list(caller.organizationId) };
  }

  @Get('profile-templates/:id')
  async getTemplate(@CurrentCaller() caller: Caller, @Param('id') id: string): Promise<ProfileTemplate> {
    const t = await this.templates.get(caller.organizationId, id);
    if (!t) throw new PaddockError('not_found', `profile template ${id} not found`);
    return t;
  }
}
