import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { RawData, WebSocket } from 'ws';
import type { Principal, TokenAuthenticator } from '../auth/token-authenticator';
import type { RunnerStream } from '../runners/runner-client';
import { frameError, type ExecStreamInit, type SandboxOpsService } from '../sandboxes/sandbox-ops.service';
import { PaddockError } from '@paddock/contracts';
import { toPaddockError } from './error.filter';
import { authorizationFromProtocols } from './websocket-bearer';

const protocolError = (message: string): PaddockError => new PaddockError('invalid_argument', message, { reason: 'CWSANDBOX_INVALID_REQUEST' });

/** Path of the bidirectional exec stream (documented in the README). */
export const EXEC_STREAM_PATH = '/v1/sandboxes/:id/exec/stream';
/** First byte of a binary server frame. */
export const CHANNEL_STDOUT = 1;
export const CHANNEL_STDERR = 2;

type ClientMessage =
  | ({ type: 'init' } & ExecStreamInit)
  | { type: 'stdin'; data: string }
  | { type: 'resize'; cols: number; rows: number }
  | { type: 'close' }
  | { type: 'cancel' };

const sendAsync = (socket: WebSocket, data: string | Buffer): Promise<void> =>
  new Promise((resolve) => socket.send(data, () => resolve()));

function sendError(socket: WebSocket, e: unknown): void {
  const err = toPaddockError(e);
  socket.send(JSON.stringify({ type: 'error', ...err.toBody() }), () => socket.close(1011, err.code));
}

/**
 * Registers the WebSocket exec route. Authentication runs in `preValidation`, before the
 * upgrade, so a bad token gets the same HTTP 401 JSON as every other route and never a socket.
 * The token comes from the Authorization header or, for browsers, from the subprotocol list.
 */
export function registerExecWebSocket(fastify: FastifyInstance, auth: TokenAuthenticator, ops: SandboxOpsService): void {
  fastify.get<{ Params: { id: string } }>(
    EXEC_STREAM_PATH,
    {
      websocket: true,
      preValidation: async (req: FastifyRequest & { principal?: Principal }, reply: FastifyReply) => {
        try {
          // A browser carries its token in Sec-WebSocket-Protocol (websocket-bearer.ts).
          const authorization = req.headers.authorization ?? authorizationFromProtocols(req.headers['sec-websocket-protocol']);
          req.principal = await auth.authenticateRequest({ headers: { authorization }, ip: req.ip });
        } catch (e) {
          const err = toPaddockError(e);
          await reply.status(err.httpStatus).send(err.toBody());
        }
      },
    },
    (socket: WebSocket, req: FastifyRequest<{ Params: { id: string } }> & { principal?: Principal }) => {
      const principal = req.principal as Principal;
      let stream: RunnerStream | null = null;
      let finished = false;
      let chain: Promise<void> = Promise.resolve();

      const pump = async (s: RunnerStream): Promise<void> => {
        for (;;) {
          const f = await s.next();
          if (!f) {
            if (!finished) sendError(socket, new PaddockError('unavailable', 'exec stream closed by the runner', { reason: 'CWSANDBOX_RUNNER_UNAVAILABLE' }));
            return;
          }
          switch (f.header.kind) {
            case 'ready':
              await sendAsync(socket, JSON.stringify({ type: 'ready', time: f.header.time }));
              break;
            case 'stdout':
            case 'stderr': {
              const out = Buffer.allocUnsafe(f.payload.length + 1);
              out[0] = f.header.kind === 'stdout' ? CHANNEL_STDOUT : CHANNEL_STDERR;
              out.set(f.payload, 1);
              await sendAsync(socket, out);
              break;
            }
            case 'exit':
              finished = true;
              await sendAsync(
                socket,
                JSON.stringify({ type: 'exit', exitCode: f.header.exitCode ?? -1, timedOut: f.header.timedOut ?? false, ...(f.header.signal ? { signal: f.header.signal } : {}) }),
              );
              s.close();
              socket.close(1000, 'exit');
              return;
            case 'error':
              finished = true;
              s.close();
              sendError(socket, frameError(f));
              return;
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
      };

      const handle = async (data: RawData, isBinary: boolean): Promise<void> => {
        if (finished) return;
        const bytes = Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer);
        if (isBinary) {
          if (!stream) throw protocolError('binary stdin before init');
          for (let off = 0; off < bytes.length; off += 64 * 1024) await stream.sendData('stdin', bytes.subarray(off, off + 64 * 1024));
          return;
        }
        let msg: ClientMessage;
        try {
          msg = JSON.parse(bytes.toString('utf8')) as ClientMessage;
        } catch {
          throw protocolError('text frames must be JSON');
        }
        if (!stream) {
          if (msg.type !== 'init') throw protocolError('the first message must be {"type":"init"}');
          const { type: _t, ...init } = msg;
          stream = await ops.openExecStream(principal, req.params.id, init);
          const s = stream;
          pump(s).catch((e) => {
            finished = true;
            s.close();
            sendError(socket, e);
          });
          return;
        }
        switch (msg.type) {
          case 'stdin':
            await stream.sendData('stdin', Buffer.from(msg.data, 'base64'));
            break;
          case 'resize':
            stream.control({ kind: 'resize', cols: msg.cols, rows: msg.rows });
            break;
          case 'close':
            stream.control({ kind: 'stdinEof' });
            break;
          case 'cancel':
            stream.control({ kind: 'cancel' });
            break;
          case 'init':
            throw protocolError('init sent twice');
        }
      };

      socket.on('message', (data: RawData, isBinary: boolean) => {
        chain = chain
          .then(() => handle(data, isBinary))
          .catch((e) => {
            finished = true;
            stream?.control({ kind: 'cancel' });
            stream?.close();
            sendError(socket, e);
          });
      });
      socket.on('close', () => {
        if (!finished) stream?.control({ kind: 'cancel' });
        finished = true;
        stream?.close();
      });
    },
  );
}
