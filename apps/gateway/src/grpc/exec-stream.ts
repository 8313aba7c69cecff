import { create } from '@bufbuild/protobuf';
import { timestampFromDate, timestampNow } from '@bufbuild/protobuf/wkt';
import type { HandlerContext } from '@connectrpc/connect';
import { PaddockError } from '@paddock/contracts';
import { ExecStreamOutput_Stream, ExecStreamResponseSchema, type ExecStreamRequest, type ExecStreamResponse } from '@paddock/proto';
import type { Principal } from '../auth/token-authenticator';
import { frameError, type SandboxOpsService } from '../sandboxes/sandbox-ops.service';
import type { SandboxLifecycleService } from '../sandboxes/sandbox-lifecycle.service';
import type { RunnerStream } from '../runners/runner-client';
import { invalid } from '../sandboxes/request-parsing';

/** What the WebSocket exec relay chunks stdin into; the runner's credit window counts these. */
const STDIN_CHUNK_BYTES = 64 * 1024;

export interface ExecSessionDeps {
  who(ctx: HandlerContext): Promise<Principal>;
  lifecycle: SandboxLifecycleService;
  ops: SandboxOpsService;
}

const response = (message: ExecStreamResponse['message']): ExecStreamResponse => create(ExecStreamResponseSchema, { message });
const streamError = (code: string, message: string): ExecStreamResponse => response({ case: 'error', value: { $typeName: 'coreweave.sandbox.v1.ExecStreamError', code, message } });

/**
 * StreamExec: the first client message must be `init`; then stdin, resize and close go to the
 * runner while ready, output and exit come back. It opens the same runner stream as the
 * WebSocket exec relay (`SandboxOpsService.openExecStream`). A client that goes away (cancel,
 * reset, deadline) cancels the command on the runner, as a closed WebSocket does.
 */
export async function* openExecSession(requests: AsyncIterable<ExecStreamRequest>, ctx: HandlerContext, deps: ExecSessionDeps): AsyncGenerator<ExecStreamResponse> {
  const principal = await deps.who(ctx);
  const input = requests[Symbol.asyncIterator]();
  const first = await input.next();
  if (first.done || first.value.message.case !== 'init') {
    throw invalid('the first StreamExec message must be init', [{ field: 'init', rule: 'first_message', description: 'send init before stdin, resize or close' }]);
  }
  const init = first.value.message.value;
  const stream = await deps.ops.openExecStream(principal, init.sandboxId, {
    argv: init.command,
    ...(init.container ? { container: init.container } : {}),
    env: init.env,
    tty: init.tty,
    ...(init.ttyWidth ? { cols: init.ttyWidth } : {}),
    ...(init.ttyHeight ? { rows: init.ttyHeight } : {}),
  });
  let finished = false;
  const clientSide: { failure?: PaddockError } = {};
  /** Ends the relay; a command that has not exited yet is cancelled on the runner first. */
  const cancel = (): void => {
    if (!finished) {
      finished = true;
      stream.control({ kind: 'cancel' });
    }
    stream.close();
  };
  ctx.signal.addEventListener('abort', cancel, { once: true });
  void forwardInput(input, stream).catch((e: unknown) => {
    // A protocol error from the client (or its disconnect) ends the command.
    if (!ctx.signal.aborted) clientSide.failure = e instanceof PaddockError ? e : invalid(e instanceof Error ? e.message : String(e));
    cancel();
  });
  try {
    for (;;) {
      const f = await stream.next();
      if (!f) {
        if (clientSide.failure) throw clientSide.failure;
        if (!ctx.signal.aborted) yield streamError('RUNNER_UNAVAILABLE', 'exec stream closed by the runner before the command exited');
        return;
      }
      switch (f.header.kind) {
        case 'ready':
          yield response({ case: 'ready', value: { $typeName: 'coreweave.sandbox.v1.ExecStreamReady', readyTime: f.header.time ? timestampFromDate(new Date(f.header.time)) : timestampNow() } });
          break;
        case 'stdout':
        case 'stderr':
          yield response({
            case: 'output',
            value: {
              $typeName: 'coreweave.sandbox.v1.ExecStreamOutput',
              stream: f.header.kind === 'stdout' ? ExecStreamOutput_Stream.STDOUT : ExecStreamOutput_Stream.STDERR,
              data: f.payload,
            },
          });
          break;
        case 'exit':
          finished = true;
          yield response({ case: 'exit', value: { $typeName: 'coreweave.sandbox.v1.ExecStreamExit', exitCode: f.header.exitCode ?? -1, completedTime: f.header.time ? timestampFromDate(new Date(f.header.time)) : timestampNow() } });
          return;
        case 'error': {
          finished = true;
          const err = frameError(f);
          yield streamError(err.reason ?? err.code.toUpperCase(), err.message);
          return;
        }
        case 'data':
        case 'eof':
        case 'credit':
        case 'stdin':
        case 'stdinEof':
        case 'resize':
        case 'cancel':
          break;
      }
    }
  } finally {
    ctx.signal.removeEventListener('abort', cancel);
    // Leaving early (the client went away mid-stream) must not leave the command running.
    // The input side is not awaited: a client may keep its half open after the exit.
    cancel();
  }
}

async function forwardInput(input: AsyncIterator<ExecStreamRequest>, stream: RunnerStream): Promise<void> {
  let stdinOpen = true;
  for (;;) {
    const r = await input.next();
    if (r.done) break;
    const m = r.value.message;
    switch (m.case) {
      case 'stdin':
        if (!stdinOpen) throw invalid('stdin after close', [{ field: 'stdin', rule: 'after_close', description: 'stdin is closed' }]);
        for (let off = 0; off < m.value.length; off += STDIN_CHUNK_BYTES) await stream.sendData('stdin', m.value.subarray(off, off + STDIN_CHUNK_BYTES));
        break;
      case 'resize':
        stream.control({ kind: 'resize', cols: m.value.width, rows: m.value.height });
        break;
      case 'close':
        if (stdinOpen) stream.control({ kind: 'stdinEof' });
        stdinOpen = false;
        break;
      case 'init':
        throw invalid('init sent twice', [{ field: 'init', rule: 'once', description: 'init is the first message only' }]);
      case undefined:
        break;
    }
  }
  // The client finished sending: nothing more can reach stdin, so the command sees end of input.
  if (stdinOpen) stream.control({ kind: 'stdinEof' });
}
