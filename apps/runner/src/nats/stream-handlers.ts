import { PassThrough, type Readable } from 'node:stream';
import {
  DEFAULT_STREAM_WINDOW,
  ExecStreamRequestSchema,
  LogsRequestSchema,
  MAX_INLINE_FILE_BYTES,
  ReadFileRequestSchema,
  STREAM_CHUNK_BYTES,
  subjects,
  WriteFileRequestSchema,
  type ReadFileResponse,
  type StreamFrameHeaderInput,
  type StreamOpenedResponse,
  type WriteFileResponse,
} from '@paddock/contracts';
import type { NatsConnection } from '@nats-io/transport-node';
import type { z } from 'zod';
import type { SandboxBackend } from '../backend/sandbox-backend';
import { invalidRequest, runnerErrors, toPaddockError } from '../service/errors';
import { execFailure, type RunnerLogger, type SandboxService } from '../service/sandbox-service';
import { openPortForward } from './port-forward';
import { StreamEndpoint } from './stream-endpoint';

export interface StreamHandlerDeps {
  nc: NatsConnection;
  runnerId: string;
  service: SandboxService;
  backend: SandboxBackend;
  idleTimeoutMs: number;
  log: RunnerLogger;
}

function parse<S extends z.ZodType>(schema: S, body: unknown): z.infer<S> {
  const r = schema.safeParse(body);
  if (!r.success) throw invalidRequest(r.error);
  return r.data;
}

/**
 * The streaming ops. Each handler validates, opens the runner's end of the stream (subscribed
 * before the reply goes out, so no caller frame can be missed), replies at once, and keeps
 * pumping frames in the background until `exit`/`eof`/`error`.
 */
export class StreamHandlers {
  constructor(private readonly d: StreamHandlerDeps) {}

  private open(streamId: string, initialCredit: number): StreamEndpoint {
    return new StreamEndpoint(this.d.nc, {
      sendSubject: subjects.streamFromRunner(this.d.runnerId, streamId),
      recvSubject: subjects.streamToRunner(this.d.runnerId, streamId),
      initialSendGrant: initialCredit,
      recvWindow: DEFAULT_STREAM_WINDOW,
      idleTimeoutMs: this.d.idleTimeoutMs,
    });
  }

  private fail(ep: StreamEndpoint, e: unknown, context: { path?: string } = {}): void {
    ep.sendControl({ kind: 'error', error: toPaddockError(e, context).toBody() });
    ep.close();
  }

  portForward(body: unknown): Promise<StreamOpenedResponse> {
    return openPortForward(this.d, (streamId, credit) => this.open(streamId, credit), body);
  }

  async execStream(body: unknown): Promise<StreamOpenedResponse> {
    const req = parse(ExecStreamRequestSchema, body);
    const rec = await this.d.service.ensureRunning(req.organizationId, req.sandboxId);
    const proc = await this.d.backend
      .execStream(req.sandboxId, {
        argv: req.argv,
        ...(req.container ? { container: req.container } : {}),
        env: req.env,
        ...(req.cwd ? { cwd: req.cwd } : {}),
        tty: req.tty,
        ...(req.cols ? { cols: req.cols } : {}),
        ...(req.rows ? { rows: req.rows } : {}),
      })
      .catch((e: unknown) => {
        throw execFailure(rec, e);
      });
    const ep = this.open(req.streamId, req.initialCredit);
    let timedOut = false;
    const timer = req.timeoutSeconds
      ? setTimeout(() => {
          timedOut = true;
          proc.kill('SIGKILL');
        }, req.timeoutSeconds * 1000)
      : undefined;
    // The process may exit before the caller's last stdin frame; EPIPE is then expected.
    proc.stdin.on('error', () => undefined);
    ep.onFrame = ({ header, payload }) => {
      if (header.kind === 'stdin') {
        proc.stdin.write(payload, () => ep.consumed(header.seq));
      } else if (header.kind === 'stdinEof') {
        proc.stdin.end();
      } else if (header.kind === 'resize') {
        if (header.cols && header.rows) proc.resize(header.cols, header.rows);
      } else if (header.kind === 'cancel') {
        // The stream stays open: the caller learns of the kill from the exit frame (SIGKILL),
        // instead of waiting forever on a stream that was closed without a word.
        proc.kill('SIGKILL');
      }
    };
    ep.onClose = (err) => {
      // A stream that dies (caller gone, credit timeout) must not leave the command running.
      if (err) proc.kill('SIGKILL');
    };
    void (async () => {
      try {
        ep.sendControl({ kind: 'ready', time: new Date().toISOString() });
        await Promise.all([pump(ep, proc.stdout, 'stdout'), pump(ep, proc.stderr, 'stderr')]);
        const { exitCode, signal } = await proc.exited;
        ep.sendControl({
          kind: 'exit',
          exitCode: exitCode ?? (signal ? 128 + signalNumber(signal) : -1),
          ...(signal ? { signal } : {}),
          timedOut,
          time: new Date().toISOString(),
        });
        ep.close();
      } catch (e) {
        proc.kill('SIGKILL');
        this.fail(ep, e);
      } finally {
        if (timer) clearTimeout(timer);
      }
    })();
    return { streamId: req.streamId, stdinCredit: ep.recvWindow };
  }

  async logs(body: unknown): Promise<StreamOpenedResponse> {
    const req = parse(LogsRequestSchema, body);
    if ((await this.d.service.touchForLogs(req.organizationId, req.sandboxId)).logsDeleted) throw runnerErrors.logsDeleted(req.sandboxId);
    const ep = this.open(req.streamId, req.initialCredit);
    const abort = new AbortController();
    ep.onFrame = ({ header }) => {
      if (header.kind === 'cancel') ep.close();
    };
    ep.onClose = () => abort.abort();
    const chunks = this.d.backend.logs(req.sandboxId, {
      follow: req.follow,
      ...(req.container ? { container: req.container } : {}),
      ...(req.tailLines !== undefined ? { tailLines: req.tailLines } : {}),
      ...(req.sinceTime !== undefined ? { sinceTime: new Date(req.sinceTime) } : {}),
      ...(req.fromOffset !== undefined ? { fromOffset: req.fromOffset } : {}),
      signal: abort.signal,
    });
    void (async () => {
      try {
        for await (const c of chunks) {
          const time = c.time.toISOString();
          for (let off = 0; off < c.data.length; off += STREAM_CHUNK_BYTES) {
            const piece = c.data.subarray(off, off + STREAM_CHUNK_BYTES);
            await ep.sendCredited({ kind: c.stream, offset: c.offset + off, time }, piece);
          }
        }
        ep.sendControl({ kind: 'eof' });
        ep.close();
      } catch (e) {
        if (!ep.isClosed) this.fail(ep, e);
      }
    })();
    return { streamId: req.streamId, stdinCredit: 0 };
  }

  async readFile(body: unknown): Promise<ReadFileResponse> {
    const req = parse(ReadFileRequestSchema, body);
    await this.d.service.ensureRunning(req.organizationId, req.sandboxId);
    const ctx = { path: req.path };
    const st = await this.d.backend.stat(req.sandboxId, req.path).catch((e: unknown) => {
      throw toPaddockError(e, ctx);
    });
    if (st.type === 'directory') throw toPaddockError(Object.assign(new Error('is a directory'), { code: 'EISDIR' }), ctx);
    if (req.streamId === undefined) {
      if (st.size > MAX_INLINE_FILE_BYTES) throw runnerErrors.fileTooLarge(req.path, st.size, MAX_INLINE_FILE_BYTES);
      const content = await this.d.backend.readFile(req.sandboxId, req.path).then(
        (r) => collect(r, MAX_INLINE_FILE_BYTES, req.path),
        (e: unknown) => {
          throw toPaddockError(e, ctx);
        },
      );
      return { streamed: false, contentBase64: content.toString('base64'), size: content.length };
    }
    const readable = await this.d.backend.readFile(req.sandboxId, req.path).catch((e: unknown) => {
      throw toPaddockError(e, ctx);
    });
    const ep = this.open(req.streamId, req.initialCredit);
    ep.onFrame = ({ header }) => {
      if (header.kind === 'cancel') ep.close();
    };
    ep.onClose = () => readable.destroy();
    void (async () => {
      try {
        let total = 0;
        for await (const chunk of readable as AsyncIterable<Buffer>) {
          for (let off = 0; off < chunk.length; off += STREAM_CHUNK_BYTES) {
            const piece = chunk.subarray(off, off + STREAM_CHUNK_BYTES);
            await ep.sendCredited({ kind: 'data' }, piece);
            total += piece.length;
          }
        }
        ep.sendControl({ kind: 'eof', totalBytes: total });
        ep.close();
      } catch (e) {
        if (!ep.isClosed) this.fail(ep, e, ctx);
      }
    })();
    return { streamed: true, size: st.size };
  }

  async writeFile(body: unknown): Promise<WriteFileResponse> {
    const req = parse(WriteFileRequestSchema, body);
    await this.d.service.ensureRunning(req.organizationId, req.sandboxId);
    const ctx = { path: req.path };
    if (req.streamId === undefined) {
      const content = Buffer.from(req.contentBase64 ?? '', 'base64');
      await this.d.backend.writeFile(req.sandboxId, req.path, content, req.mode).catch((e: unknown) => {
        throw toPaddockError(e, ctx);
      });
      return { streamed: false, bytesWritten: content.length };
    }
    const ep = this.open(req.streamId, 1);
    // The PassThrough's own buffer plus the credit window bound what an upload holds in memory.
    const upload = new PassThrough({ highWaterMark: STREAM_CHUNK_BYTES });
    let total = 0;
    ep.onFrame = ({ header, payload }) => {
      if (header.kind === 'data') {
        total += payload.length;
        upload.write(payload, () => ep.consumed(header.seq));
      } else if (header.kind === 'eof') {
        upload.end();
      } else if (header.kind === 'cancel') {
        upload.destroy(new Error('upload cancelled by the caller'));
        ep.close();
      }
    };
    ep.onClose = (err) => {
      if (err) upload.destroy(err);
    };
    upload.on('error', () => undefined);
    this.d.backend.writeFile(req.sandboxId, req.path, upload, req.mode).then(
      () => {
        ep.sendControl({ kind: 'eof', totalBytes: total });
        ep.close();
      },
      (e: unknown) => {
        if (!ep.isClosed) this.fail(ep, e, ctx);
      },
    );
    return { streamed: true, stdinCredit: ep.recvWindow };
  }
}

/** Pumps a child's output into credited frames; awaiting credit stops pulling (backpressure). */
async function pump(ep: StreamEndpoint, readable: Readable, kind: 'stdout' | 'stderr'): Promise<void> {
  for await (const chunk of readable as AsyncIterable<Buffer>) {
    for (let off = 0; off < chunk.length; off += STREAM_CHUNK_BYTES) {
      const header: StreamFrameHeaderInput = { kind };
      await ep.sendCredited(header, chunk.subarray(off, off + STREAM_CHUNK_BYTES));
    }
  }
}

async function collect(readable: Readable, limit: number, path: string): Promise<Buffer> {
  const parts: Buffer[] = [];
  let size = 0;
  for await (const chunk of readable as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) {
      readable.destroy();
      throw runnerErrors.fileTooLarge(path, size, limit);
    }
    parts.push(chunk);
  }
  return Buffer.concat(parts);
}

const SIGNALS: Partial<Record<NodeJS.Signals, number>> = { SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGKILL: 9, SIGTERM: 15, SIGPIPE: 13 };
function signalNumber(s: NodeJS.Signals): number {
  return SIGNALS[s] ?? 0;
}
