import { create, toJson, type JsonObject } from '@bufbuild/protobuf';
import type { HandlerContext, ServiceImpl } from '@connectrpc/connect';
import {
  DeleteSandboxResponseSchema,
  ExecResponseSchema,
  ListSandboxesResponseSchema,
  PurgeSandboxesRequestSchema,
  PurgeSandboxesResponseSchema,
  ReadFileResponseSchema,
  State,
  StateSchema,
  WriteFileResponseSchema,
  type SandboxService,
} from '@paddock/proto';
import type { Principal, TokenAuthenticator } from '../auth/token-authenticator';
import type { SandboxLifecycleService } from '../sandboxes/sandbox-lifecycle.service';
import type { SandboxOpsService } from '../sandboxes/sandbox-ops.service';
import { principalOf } from './call-context';
import { openExecSession } from './exec-stream';
import { streamLogEntries } from './log-stream';
import { sandboxFromView, specToRestJson } from './sandbox-projection';
import { notImplemented } from './status-mapping';
import { requirePrimaryContainer } from './target-container';

export interface SandboxServiceDeps {
  auth: TokenAuthenticator;
  lifecycle: SandboxLifecycleService;
  ops: SandboxOpsService;
}

/**
 * `coreweave.sandbox.v1.SandboxService` over the gateway's own services: every method calls
 * what the REST controller calls, with the request turned into the arguments REST would have
 * parsed, so validation, placement, authorization and errors are one implementation.
 */
export function sandboxServiceImpl({ auth, lifecycle, ops }: SandboxServiceDeps): ServiceImpl<typeof SandboxService> {
  const who = (ctx: HandlerContext): Promise<Principal> => principalOf(auth, ctx);
  /** Authenticated first, so a bad token reads the same on every method, built or not. */
  const unimplemented = async (ctx: HandlerContext, what: string): Promise<never> => {
    await who(ctx);
    throw notImplemented(what);
  };

  return {
    async createSandbox(req, ctx) {
      const p = await who(ctx);
      const body: JsonObject = { sandbox: { spec: specToRestJson(req.sandbox?.spec) } };
      if (req.requestId) body.requestId = req.requestId;
      return sandboxFromView((await lifecycle.create(p, body)).view);
    },
    createSandboxFromTemplate: (_req, ctx) => unimplemented(ctx, 'CreateSandboxFromTemplate (sandbox templates)'),
    createSandboxFromFile: (_req, ctx) => unimplemented(ctx, 'CreateSandboxFromFile (Compose files)'),
    async getSandbox(req, ctx) {
      return sandboxFromView(await lifecycle.get(await who(ctx), req.sandboxId));
    },
    async listSandboxes(req, ctx) {
      const p = await who(ctx);
      if (req.volumeIds.length) throw notImplemented('ListSandboxesRequest.volume_ids (registered volumes)');
      const page = await lifecycle.list(p, {
        ...(req.pageSize ? { pageSize: req.pageSize } : {}),
        ...(req.pageToken ? { pageToken: req.pageToken } : {}),
        ...(req.tags.length ? { tags: req.tags } : {}),
        ...(req.state !== State.UNSPECIFIED ? { state: StateSchema.value[req.state]?.name ?? String(req.state) } : {}),
        ...(req.runnerIds.length ? { runnerIds: req.runnerIds } : {}),
        showTerminated: req.showTerminated,
      });
      return create(ListSandboxesResponseSchema, { sandboxes: page.sandboxes.map(sandboxFromView), nextPageToken: page.nextPageToken });
    },
    async deleteSandbox(req, ctx) {
      const p = await who(ctx);
      if (req.snapshotVolumes.length) throw notImplemented('DeleteSandboxRequest.snapshot_volumes (file-system snapshots)');
      const { sandbox } = await lifecycle.delete(p, req.sandboxId, req.gracePeriodSeconds, req.allowMissing);
      return create(DeleteSandboxResponseSchema, sandbox ? { sandbox: sandboxFromView(sandbox) } : {});
    },
    async purgeSandboxes(req, ctx) {
      const p = await who(ctx);
      const res = await lifecycle.purge(p, toJson(PurgeSandboxesRequestSchema, req));
      return create(PurgeSandboxesResponseSchema, res);
    },
    connectSandbox: (_req, ctx) => unimplemented(ctx, 'ConnectSandbox (direct data-plane connections)'),
    async exec(req, ctx) {
      const p = await who(ctx);
      const out = await ops.exec(p, req.sandboxId, { command: req.command, env: req.env, maxOutputBytes: req.maxOutputBytes, container: req.container });
      return create(ExecResponseSchema, {
        stdout: Buffer.from(out.stdout, 'base64'),
        stderr: Buffer.from(out.stderr, 'base64'),
        exitCode: out.exitCode,
        stdoutTruncated: out.stdoutTruncated,
        stderrTruncated: out.stderrTruncated,
        stdoutBytesProduced: BigInt(out.stdoutBytesProduced),
        stderrBytesProduced: BigInt(out.stderrBytesProduced),
      });
    },
    streamExec(reqs, ctx) {
      return openExecSession(reqs, ctx, { who, lifecycle, ops });
    },
    streamLogs(req, ctx) {
      return streamLogEntries(req, ctx, { who, lifecycle, ops });
    },
    async writeFile(req, ctx) {
      const p = await who(ctx);
      await requirePrimaryContainer(lifecycle, p, req.sandboxId, req.container);
      await ops.writeFile(p, req.sandboxId, req.path, Buffer.from(req.content));
      return create(WriteFileResponseSchema);
    },
    async readFile(req, ctx) {
      const p = await who(ctx);
      await requirePrimaryContainer(lifecycle, p, req.sandboxId, req.container);
      return create(ReadFileResponseSchema, { content: await ops.readFile(p, req.sandboxId, req.path) });
    },
    createFileSystemSnapshot: (_req, ctx) => unimplemented(ctx, 'CreateFileSystemSnapshot (file-system snapshots)'),
    getFileSystemSnapshot: (_req, ctx) => unimplemented(ctx, 'GetFileSystemSnapshot (file-system snapshots)'),
    listFileSystemSnapshots: (_req, ctx) => unimplemented(ctx, 'ListFileSystemSnapshots (file-system snapshots)'),
    deleteFileSystemSnapshot: (_req, ctx) => unimplemented(ctx, 'DeleteFileSystemSnapshot (file-system snapshots)'),
  };
}
