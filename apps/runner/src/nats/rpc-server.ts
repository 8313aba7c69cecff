import {
  ListDirRequestSchema,
  queueGroups,
  RemoveRequestSchema,
  RpcTraceSchema,
  RUNNER_RPC_OPS,
  StatRequestSchema,
  subjects,
  type FileStatWire,
  type RunnerRpcOp,
  type RunnerRpcReply,
  PaddockError,
} from '@paddock/contracts';
import type { Msg, NatsConnection, Subscription } from '@nats-io/transport-node';
import { withRequestId } from '@paddock/kit';
import type { z } from 'zod';
import type { FileStat, SandboxBackend } from '../backend/sandbox-backend';
import { invalidRequest, toPaddockError } from '../service/errors';
import type { RunnerLogger, SandboxService } from '../service/sandbox-service';
import type { StreamHandlers } from './stream-handlers';

type Handler = (body: unknown) => Promise<unknown>;

function parse<S extends z.ZodType>(schema: S, body: unknown): z.infer<S> {
  const r = schema.safeParse(body);
  if (!r.success) throw invalidRequest(r.error);
  return r.data;
}

/** The request id a (still unparsed) request names, if it is well-formed. */
function requestIdOf(body: unknown): string | undefined {
  const trace = typeof body === 'object' && body !== null ? (body as { trace?: unknown }).trace : undefined;
  const r = RpcTraceSchema.safeParse(trace);
  return r.success ? r.data.requestId : undefined;
}

/** Shared: `decode` keeps no state between calls without `stream: true`. */
const utf8 = new TextDecoder();

const sandboxIdOf = (body: unknown): unknown => (typeof body === 'object' && body !== null ? (body as { sandboxId?: unknown }).sandboxId : undefined);

function statToWire(s: FileStat): FileStatWire {
  return { path: s.path, type: s.type, size: s.size, mode: s.mode, modifiedAt: s.modifiedAt.toISOString() };
}

/**
 * Serves the runner's RPC subjects with plain core-NATS request/reply in the runner's queue group.
 *
 * Why not `@nats-io/services`: on the pinned 3.3.1 line it only exists as a prerelease
 * (3.0.0-25 at the time of writing), and all it would add here is `$SRV` discovery and stats. The
 * envelope (`{ ok, result } | { ok: false, error: ApiErrorBody }`) and the subject scheme live in
 * `@paddock/contracts`, so moving to the services framework later changes only this file.
 */
export class RunnerRpcServer {
  private sub: Subscription | undefined;
  private readonly handlers: Record<RunnerRpcOp, Handler>;
  private inFlight = 0;

  constructor(
    private readonly nc: NatsConnection,
    private readonly runnerId: string,
    service: SandboxService,
    backend: SandboxBackend,
    streams: StreamHandlers,
    private readonly log: RunnerLogger,
  ) {
    const fileOp = async <T>(path: string, fn: () => Promise<T>): Promise<T> => {
      try {
        return await fn();
      } catch (e) {
        throw toPaddockError(e, { path });
      }
    };
    this.handlers = {
      create: async (b) => ({ sandbox: await service.create(b) }),
      get: async (b) => ({ sandbox: service.get(b) }),
      list: async (b) => ({ sandboxes: service.list(b) }),
      delete: async (b) => service.delete(b),
      exec: (b) => service.exec(b),
      execStream: (b) => streams.execStream(b),
      readFile: (b) => streams.readFile(b),
      writeFile: (b) => streams.writeFile(b),
      logs: (b) => streams.logs(b),
      deleteLogs: (b) => service.deleteLogs(b),
      portForward: (b) => streams.portForward(b),
      pause: async (b) => ({ sandbox: await service.pause(b) }),
      resume: async (b) => ({ sandbox: await service.resume(b) }),
      snapshot: (b) => service.snapshot(b),
      deleteSnapshot: (b) => service.deleteSnapshot(b),
      listDir: async (b) => {
        const req = parse(ListDirRequestSchema, b);
        await service.ensureRunning(req.organizationId, req.sandboxId);
        const entries = await fileOp(req.path, () => backend.listDir(req.sandboxId, req.path));
        return { entries: entries.map(statToWire) };
      },
      stat: async (b) => {
        const req = parse(StatRequestSchema, b);
        await service.ensureRunning(req.organizationId, req.sandboxId);
        return { stat: statToWire(await fileOp(req.path, () => backend.stat(req.sandboxId, req.path))) };
      },
      remove: async (b) => {
        const req = parse(RemoveRequestSchema, b);
        await service.ensureRunning(req.organizationId, req.sandboxId);
        await fileOp(req.path, () => backend.remove(req.sandboxId, req.path, req.recursive));
        return {};
      },
    };
  }

  start(): void {
    this.sub = this.nc.subscribe(subjects.runnerRpcAll(this.runnerId), {
      queue: queueGroups.runner(this.runnerId),
      callback: (err, msg) => {
        if (err) {
          this.log.error('RPC subscription failed', { error: err.message });
          return;
        }
        void this.handle(msg);
      },
    });
  }

  /** Stops taking new requests and waits (bounded) for the in-flight ones to reply. */
  async stop(timeoutMs = 5_000): Promise<void> {
    this.sub?.unsubscribe();
    const deadline = Date.now() + timeoutMs;
    while (this.inFlight > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  }

  private async handle(msg: Msg): Promise<void> {
    const op = msg.subject.slice(msg.subject.lastIndexOf('.') + 1);
    this.inFlight++;
    const started = performance.now();
    let reply: RunnerRpcReply<unknown>;
    let body: unknown;
    let requestId: string | undefined;
    try {
      if (!(RUNNER_RPC_OPS as readonly string[]).includes(op)) {
        throw new PaddockError('unimplemented', `unknown runner operation ${op}`, { reason: 'CWSANDBOX_INVALID_REQUEST' });
      }
      try {
        body = msg.data.length ? JSON.parse(utf8.decode(msg.data)) : {};
      } catch {
        throw new PaddockError('invalid_argument', 'request body is not valid JSON', { reason: 'CWSANDBOX_INVALID_REQUEST' });
      }
      const handler = this.handlers[op as RunnerRpcOp];
      requestId = requestIdOf(body);
      // The work the op starts (a sandbox's start after create's reply) keeps the request id too.
      const result = await (requestId === undefined ? handler(body) : withRequestId(requestId, () => handler(body)));
      reply = { ok: true, result };
    } catch (e) {
      const err = toPaddockError(e);
      if (err.code === 'internal') this.log.error('RPC failed', { op, requestId, error: err.message });
      reply = { ok: false, error: err.toBody() };
    } finally {
      this.inFlight--;
    }
    try {
      if (msg.reply) msg.respond(JSON.stringify(reply));
    } catch (e) {
      // Only possible while the connection closes; the caller's request times out and it retries.
      this.log.warn('Could not send an RPC reply', { op, error: String(e) });
    }
    // Logged once the reply is on the wire: the NATS client writes it in a microtask queued by
    // respond(), so a microtask queued after it runs after that write, and the line (a synchronous
    // write of its own) is no longer part of the caller's wait.
    const line = {
      op,
      sandboxId: sandboxIdOf(body),
      requestId,
      outcome: reply.ok ? 'ok' : reply.error.code,
      durationMs: Math.round((performance.now() - started) * 10) / 10,
    };
    queueMicrotask(() => this.log.info('rpc', line));
  }
}
