import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import {
  PaddockError,
  type ListManagedRunnersResponse,
  type ListRunnerRevisionsResponse,
  type ManagedRunner,
} from '@paddock/contracts';
import { CurrentCaller, RequireRole, type Caller } from '../../identity';
import {
  ApplyAvailableUpdateCommand,
  CreateManagedRunnerCommand,
  DeleteManagedRunnerCommand,
  UpdateManagedRunnerCommand,
} from '../application/runner.commands';
import { RunnerQueries, type RawQuery } from '../application/runner-queries';
import { parseCreateRunner, parseUpdateRunner } from '../application/runner-input';
import { parseUpdateMask } from '../domain/update-mask';

/** `PATCH /v1/sandbox/managedRunners/{id}` as a command; the route and its fast path both build it here. */
export function updateCommand(caller: Caller, id: string, body: unknown, query: RawQuery): UpdateManagedRunnerCommand {
  const mask = query.updateMask ?? query.update_mask;
  // Repeated `updateMask=a&updateMask=b` is the same as `updateMask=a,b`.
  const joined = Array.isArray(mask) ? mask.join(',') : mask;
  const plan = parseUpdateMask(joined);
  return new UpdateManagedRunnerCommand(caller, id, plan, parseUpdateRunner(body, plan));
}

const first = (v: string | string[] | undefined): string | undefined => (Array.isArray(v) ? v[0] : v);

/**
 * RunnerManagementService v1. Every route, reads included, needs SANDBOX_ADMIN.
 *
 * `POST /v1/sandbox/managedRunners/{id}:applyAvailableUpdate` is a custom method: the router sees
 * `{id}:applyAvailableUpdate` as one path segment, so it lands on the `:name` route below and is
 * dispatched on its `:verb` suffix.
 */
@Controller('v1/sandbox/managedRunners')
@RequireRole('SANDBOX_ADMIN')
export class ManagedRunnersController {
  constructor(
    private readonly commands: CommandBus,
    private readonly queries: RunnerQueries,
  ) {}

  @Post()
  @HttpCode(200)
  create(@CurrentCaller() caller: Caller, @Body() body: unknown, @Query() query: RawQuery): Promise<ManagedRunner> {
    const requestId = first(query.requestId) ?? first(query.request_id);
    const runnerId = first(query.runnerId) ?? first(query.runner_id);
    return this.commands.execute(
      new CreateManagedRunnerCommand(caller, parseCreateRunner(body, { ...(requestId !== undefined ? { requestId } : {}), ...(runnerId !== undefined ? { runnerId } : {}) })),
    );
  }

  @Post(':name')
  @HttpCode(200)
  customMethod(@CurrentCaller() caller: Caller, @Param('name') name: string): Promise<ManagedRunner> {
    const at = name.lastIndexOf(':');
    const runnerRef = at > 0 ? name.slice(0, at) : name;
    const verb = at > 0 ? name.slice(at + 1) : '';
    if (verb !== 'applyAvailableUpdate') {
      throw new PaddockError('not_found', `no method ${verb ? `:${verb.slice(0, 100)}` : ''} on managed runners; the custom method is {runnerId}:applyAvailableUpdate`);
    }
    return this.commands.execute(
      new ApplyAvailableUpdateCommand({ organizationId: caller.organizationId, runnerId: runnerRef, trigger: 'user', actor: caller.actor }),
    );
  }

  @Get()
  list(@CurrentCaller() caller: Caller, @Query() query: RawQuery): Promise<ListManagedRunnersResponse> {
    return this.queries.list(caller.organizationId, query);
  }

  @Get(':id')
  get(@CurrentCaller() caller: Caller, @Param('id') id: string): Promise<ManagedRunner> {
    return this.queries.get(caller.organizationId, id);
  }

  @Get(':id/revisions')
  revisions(@CurrentCaller() caller: Caller, @Param('id') id: string): Promise<ListRunnerRevisionsResponse> {
    return this.queries.revisions(caller.organizationId, id);
  }

  @Patch(':id')
  update(@CurrentCaller() caller: Caller, @Param('id') id: string, @Body() body: unknown, @Query() query: RawQuery): Promise<ManagedRunner> {
    return this.commands.execute(updateCommand(caller, id, body, query));
  }

  @Delete(':id')
  @HttpCode(200)
  async remove(@CurrentCaller() caller: Caller, @Param('id') id: string, @Query() query: RawQuery): Promise<ManagedRunner | Record<string, never>> {
    const allowMissing = ['true', '1'].includes(String(first(query.allowMissing) ?? first(query.allow_missing) ?? '').toLowerCase());
    const runner = await this.commands.execute(new DeleteManagedRunnerCommand(caller, id, allowMissing));
    return runner ?? {};
  }
}
