import { Controller, Delete, Get, Inject, Param, Query, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Principal } from '../auth/token-authenticator';
import { AuthGuard, CurrentPrincipal } from '../http/auth.guard';
import { SNAPSHOTS } from '../http/tokens';
import type { SnapshotsService } from './snapshots.service';

type Query = Record<string, string | string[] | undefined>;
const first = (v: string | string[] | undefined): string | undefined => (Array.isArray(v) ? v[0] : v);

/** `/v1/fileSystemSnapshots`: Get, List (`sourceSandboxId`), Delete (`allowMissing`). Creating is `POST /v1/sandboxes/{id}:snapshot`. */
@ApiTags('SandboxService')
@ApiBearerAuth()
@UseGuards(AuthGuard)
@Controller('v1')
export class SnapshotsController {
  constructor(@Inject(SNAPSHOTS) private readonly snapshots: SnapshotsService) {}

  @Get('fileSystemSnapshots')
  @ApiOperation({ summary: 'ListFileSystemSnapshots: sourceSandboxId, pageSize (50, max 100), pageToken; newest first.' })
  list(@CurrentPrincipal() p: Principal, @Query() q: Query) {
    const size = first(q.pageSize);
    return this.snapshots.list(p, {
      ...(first(q.sourceSandboxId) ? { sourceSandboxId: first(q.sourceSandboxId) } : {}),
      ...(size && /^\d+$/.test(size) ? { pageSize: Number(size) } : {}),
      ...(first(q.pageToken) ? { pageToken: first(q.pageToken) } : {}),
    });
  }

  @Get('fileSystemSnapshots/:id')
  @ApiOperation({ summary: 'GetFileSystemSnapshot: state SNAPSHOT_STATE_CREATING → READY | FAILED (stateReason: a CWSANDBOX_FSS_* reason).' })
  get(@CurrentPrincipal() p: Principal, @Param('id') id: string) {
    return this.snapshots.get(p, id);
  }

  @Delete('fileSystemSnapshots/:id')
  @ApiOperation({ summary: 'DeleteFileSystemSnapshot: removes the archive from the store; allowMissing.' })
  delete(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Query('allowMissing') allowMissing?: string) {
    return this.snapshots.delete(p, id, allowMissing === 'true' || allowMissing === '1');
  }
}
