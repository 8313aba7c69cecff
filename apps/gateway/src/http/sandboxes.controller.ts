import { Readable } from 'node:stream';
import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Post, Put, Query, Req, Res, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiBody, ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { PaddockError, type SandboxSpec } from '@paddock/contracts';
import type { Principal } from '../auth/token-authenticator';
import { invalid, parseCreateRequest } from '../sandboxes/request-parsing';
import type { SandboxLifecycleService } from '../sandboxes/sandbox-lifecycle.service';
import type { SandboxView } from '../sandboxes/sandbox-view';
import { decodeBase64Field, type SandboxOpsService, type UnaryExecOutput } from '../sandboxes/sandbox-ops.service';
import { AuthGuard, CurrentPrincipal } from './auth.guard';
import { toPaddockError } from './error.filter';
import { LIFECYCLE, OPS, SNAPSHOTS } from './tokens';
import type { SnapshotsService } from '../snapshots/snapshots.service';

type Query = Record<string, string | string[] | undefined>;

const asList = (v: string | string[] | undefined): string[] | undefined =>
  v === undefined ? undefined : (Array.isArray(v) ? v : [v]).flatMap((x) => x.split(',')).filter(Boolean);
const first = (v: string | string[] | undefined): string | undefined => (Array.isArray(v) ? v[0] : v);
const asBool = (v: string | string[] | undefined): boolean | undefined => {
  const s = first(v);
  return s === undefined ? undefined : s === 'true' || s === '1';
};
function asInt(v: string | string[] | undefined, field: string): number | undefined {
  const s = first(v);
  if (s === undefined || s === '') return undefined;
  if (!/^\d+$/.test(s)) throw invalid(`${field} must be a non-negative integer`, [{ field, rule: 'integer', description: 'digits only' }]);
  return Number(s);
}

/** The Fastify route of `POST /v1/sandboxes/{id}:verb` (Nest's `@Post('sandboxes/:idVerb')` under `v1`). */
export const SANDBOX_VERB_ROUTE = '/v1/sandboxes/:idVerb';

/** A JSON body as the verb handlers read it: anything but an object counts as `{}`. */
export const bodyFields = (body: unknown): Record<string, unknown> => (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;

/**
 * `{id}:verb` routes: Fastify sees `/v1/sandboxes/:id` and the verb rides in the parameter
 * (sandbox ids never contain a colon), so one handler per method dispatches on it.
 */
export function splitVerb(idAndVerb: string): { id: string; verb: string | null } {
  const i = idAndVerb.indexOf(':');
  return i < 0 ? { id: idAndVerb, verb: null } : { id: idAndVerb.slice(0, i), verb: idAndVerb.slice(i + 1) };
}

/**
 * The unary exec verb: the one implementation behind both this controller's route and the fast
 * path that answers it before Nest's pipeline (exec-fast-path.ts).
 */
export function unaryExec(ops: SandboxOpsService, p: Principal, id: string, body: unknown): Promise<UnaryExecOutput> {
  return ops.exec(p, id, bodyFields(body));
}

/** Whether a create asks to restore a file-system snapshot (which the gateway checks first). */
const restoresSnapshot = (spec: SandboxSpec): boolean => (spec.volumes ?? []).some((v) => v.scratch?.restoreFromSnapshotId);

/** The Fastify route of `POST /v1/sandboxes` (Nest's `@Post('sandboxes')` under `v1`). */
export const CREATE_ROUTE = '/v1/sandboxes';

/**
 * CreateSandbox: the one implementation behind both this controller's route and the fast path
 * that answers it before Nest's pipeline (create-fast-path.ts).
 */
export async function createSandbox(lifecycle: SandboxLifecycleService, snapshots: SnapshotsService, p: Principal, body: unknown, requestId: string | undefined): Promise<SandboxView> {
  // Parsed once here for both: the spec's schema parse is the costliest step of the gateway's own work on a create.
  const req = parseCreateRequest(body, requestId);
  if (restoresSnapshot(req.spec)) await snapshots.checkRestore(p, body, requestId);
  return (await lifecycle.createParsed(p, req)).view;
}

function unknownVerb(verb: string): PaddockError {
  return new PaddockError('not_found', `unknown method :${verb}`);
}

@ApiTags('SandboxService')
@ApiBearerAuth()
@UseGuards(AuthGuard)
@Controller('v1')
export class SandboxesController {
  constructor(
    @Inject(LIFECYCLE) private readonly lifecycle: SandboxLifecycleService,
    @Inject(OPS) private readonly ops: SandboxOpsService,
    @Inject(SNAPSHOTS) private readonly snapshots: SnapshotsService,
  ) {}

  @Post('sandboxes')
  @HttpCode(200)
  @ApiOperation({ summary: 'CreateSandbox: places the sandbox and returns at once (STATE_PENDING/CREATING).' })
  @ApiQuery({ name: 'requestId', required: false })
  @ApiBody({ schema: { type: 'object', description: '`{sandbox: {spec}}`, `{spec, tags?}` or a bare SandboxSpec; optional `requestId`.' } })
  create(@CurrentPrincipal() p: Principal, @Body() body: unknown, @Query('requestId') requestId?: string) {
    // Normally answered before Nest by the create fast path (create-fast-path.ts).
    return createSandbox(this.lifecycle, this.snapshots, p, body, requestId);
  }

  @Post('sandboxes::explain')
  @HttpCode(200)
  @ApiOperation({ summary: 'Explains placement (per-runner verdicts) without creating anything.' })
  @ApiBody({ schema: { type: 'object' } })
  explain(@CurrentPrincipal() p: Principal, @Body() body: unknown) {
    return this.lifecycle.explain(p, body);
  }

  @Post('sandboxes::purge')
  @HttpCode(200)
  @ApiOperation({
    summary:
      'PurgeSandboxes: stops every live sandbox carrying all `tags`, or every one with `purgeAll: true` (the two exclude each other); `dryRun` only counts. Returns `{purgeCount, failedSandboxIds, retryableFailedSandboxIds}`. A non-empty `requestId` is unimplemented (501).',
  })
  @ApiBody({ schema: { type: 'object', properties: { tags: { type: 'array', items: { type: 'string' } }, purgeAll: { type: 'boolean' }, dryRun: { type: 'boolean' }, requestId: { type: 'string' } } } })
  purge(@CurrentPrincipal() p: Principal, @Body() body: unknown) {
    return this.lifecycle.purge(p, body);
  }

  @Get('sandboxes')
  @ApiOperation({ summary: 'ListSandboxes: tags (AND), state, runnerIds (any-of), showTerminated, pageSize (50, max 100), pageToken.' })
  list(@CurrentPrincipal() p: Principal, @Query() q: Query) {
    return this.lifecycle.list(p, {
      pageSize: asInt(q.pageSize, 'pageSize'),
      pageToken: first(q.pageToken),
      tags: asList(q.tags),
      state: first(q.state),
      runnerIds: asList(q.runnerIds),
      showTerminated: asBool(q.showTerminated),
    });
  }

  @Get('sandboxes/:idVerb')
  @ApiOperation({
    summary: 'GetSandbox; also `{id}:readFile?path=`, `{id}:listDir?path=`, `{id}:stat?path=`, and `{id}:wait?timeoutSeconds=&until=` (long poll until the sandbox has started, or with `until=ended` until it has ended; default 30 s, at most 60).',
  })
  async getOrVerb(@CurrentPrincipal() p: Principal, @Param('idVerb') idVerb: string, @Query() q: Query) {
    const { id, verb } = splitVerb(idVerb);
    switch (verb) {
      case null:
        return this.ops.get(p, id);
      case 'readFile':
        return { content: (await this.ops.readFile(p, id, first(q.path))).toString('base64') };
      case 'listDir':
        return this.ops.listDir(p, id, first(q.path));
      case 'stat':
        return this.ops.stat(p, id, first(q.path));
      case 'wait':
        return this.lifecycle.waitFor(p, id, q.timeoutSeconds === undefined ? 30 : Number(first(q.timeoutSeconds)), first(q.until) ?? 'started');
      default:
        throw unknownVerb(verb);
    }
  }

  @Post('sandboxes/:idVerb')
  @HttpCode(200)
  @ApiOperation({
    summary:
      '`{id}:exec` (unary), `{id}:writeFile` ({path, content base64}), `{id}:remove` ({path, recursive}), `{id}:pause` and `{id}:resume` (STATE_PAUSED: frozen, lifetime stopped; any exec, file or log call resumes it).',
  })
  @ApiBody({ schema: { type: 'object' } })
  async postVerb(@CurrentPrincipal() p: Principal, @Param('idVerb') idVerb: string, @Body() body: unknown) {
    const { id, verb } = splitVerb(idVerb);
    const b = bodyFields(body);
    switch (verb) {
      case 'exec':
        // Normally answered before Nest by the unary exec fast path (exec-fast-path.ts).
        return unaryExec(this.ops, p, id, body);
      case 'writeFile': {
        const mode = typeof b.mode === 'number' ? b.mode : undefined;
        await this.ops.writeFile(p, id, b.path, decodeBase64Field(b.content, 'content'), mode);
        return {};
      }
      case 'remove':
        return this.ops.remove(p, id, b.path, b.recursive === true);
      case 'pause':
      case 'resume':
        return this.ops.setPaused(p, id, verb === 'pause');
      case 'snapshot':
        return this.snapshots.create(p, id, b);
      case null:
        throw new PaddockError('not_found', 'POST needs a method: {id}:exec, :writeFile, :remove, :pause or :resume');
      default:
        throw unknownVerb(verb);
    }
  }

  @Delete('sandboxes/:id')
  @ApiOperation({
    summary:
      'DeleteSandbox: gracePeriodSeconds (0 = at once, max 300), allowMissing; snapshotVolumes[] (snapshotted, in order, before it stops: `fileSystemSnapshotIds[]`) with requestId.',
  })
  delete(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Query() q: Query) {
    const grace = asInt(q.gracePeriodSeconds, 'gracePeriodSeconds') ?? 0;
    const volumes = asList(q.snapshotVolumes ?? q['snapshotVolumes[]']) ?? [];
    return this.snapshots.deleteSandbox(p, id, Math.min(300, grace), asBool(q.allowMissing) ?? false, volumes, first(q.requestId));
  }

  @Put('sandboxes/:id/files')
  @HttpCode(200)
  @ApiOperation({ summary: 'Writes raw bytes (application/octet-stream body) to `?path=`; any size up to the body limit.' })
  async putFile(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Query('path') path: string, @Req() req: FastifyRequest) {
    const body = req.body;
    if (!Buffer.isBuffer(body)) throw invalid('body must be application/octet-stream', [{ field: '(body)', rule: 'content_type', description: 'application/octet-stream' }]);
    return this.ops.writeFile(p, id, path, body);
  }

  @Get('sandboxes/:id/files')
  @ApiOperation({ summary: 'Reads `?path=` as raw bytes (streamed).' })
  async getFile(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Query('path') path: string, @Res() reply: FastifyReply) {
    const chunks = await this.ops.openFileStream(p, id, path);
    // Pull the first chunk before committing to 200, so a missing file is a proper error.
    const head = await chunks.next();
    async function* all(): AsyncGenerator<Buffer> {
      if (!head.done) yield head.value;
      yield* chunks;
    }
    return reply.header('content-type', 'application/octet-stream').send(Readable.from(all()));
  }

  @Delete('sandboxes/:id/logs')
  @ApiOperation({
    summary:
      'DeleteSandboxLogs: destroys the retained logs of an ENDED sandbox (CWSANDBOX_SANDBOX_NOT_TERMINAL while it is live); idempotent. Later log reads answer CWSANDBOX_LOGS_DELETED.',
  })
  deleteLogs(@CurrentPrincipal() p: Principal, @Param('id') id: string) {
    return this.ops.deleteLogs(p, id);
  }

  @Get('sandboxes/:id/logs')
  @ApiOperation({ summary: 'StreamLogs as NDJSON: one `{offset, stream, data (base64), time}` per line; resume with fromOffset.' })
  async logs(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Query() q: Query, @Res() reply: FastifyReply) {
    const lines = await this.ops.openLogs(p, id, {
      follow: asBool(q.follow),
      tailLines: asInt(q.tailLines, 'tailLines'),
      sinceTime: first(q.sinceTime),
      fromOffset: asInt(q.fromOffset, 'fromOffset'),
      ...(first(q.container) ? { container: first(q.container) } : {}),
    });
    async function* ndjson(): AsyncGenerator<string> {
      try {
        for await (const l of lines) yield `${JSON.stringify(l)}\n`;
      } catch (e) {
        // Headers are gone by now: the error becomes the last line.
        yield `${JSON.stringify({ error: toPaddockError(e).toBody() })}\n`;
      }
    }
    const stream = Readable.from(ndjson());
    reply.raw.on('close', () => {
      stream.destroy();
      void lines.return(undefined);
    });
    return reply.header('content-type', 'application/x-ndjson').header('cache-control', 'no-store').send(stream);
  }
}
