import { spawn } from 'node:child_process';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { badRequest } from '../store/errors';
import type { Kubelet } from '../kubelet/kubelet';

/** Subprotocols of the Kubernetes streaming channel protocol we speak, best first. */
const PROTOCOLS = ['v5.channel.k8s.io', 'v4.channel.k8s.io'];
const STDIN = 0;
const STDOUT = 1;
const STDERR = 2;
const ERROR = 3;
const RESIZE = 4;
const CLOSE = 255;

const frame = (channel: number, data: Buffer | string): Buffer => Buffer.concat([Buffer.from([channel]), Buffer.isBuffer(data) ? data : Buffer.from(data)]);

/**
 * `pods/<name>/exec` over WebSocket with the channel protocol: byte 0 of every message is the
 * channel (0 stdin, 1 stdout, 2 stderr, 3 error/status, 4 resize; 255 = close a channel in v5).
 * The final status on channel 3 is a `Status`; a non-zero exit carries an `ExitCode` cause.
 */
export class ExecServer {
  private readonly wss = new WebSocketServer({
    noServer: true,
    handleProtocols: (offered: Set<string>) => PROTOCOLS.find((p) => offered.has(p)) ?? false,
  });

  constructor(private readonly kubelet: Kubelet) {}

  /** Validates the request (throws an ApiError before the upgrade) and runs the session. */
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer, ns: string, pod: string, query: URLSearchParams): void {
    const command = query.getAll('command');
    if (command.length === 0) throw badRequest('you must specify at least 1 command');
    const offered = (req.headers['sec-websocket-protocol'] ?? '').split(',').map((s) => s.trim());
    if (!PROTOCOLS.some((p) => offered.includes(p))) throw badRequest(`unable to upgrade connection: none of the requested subprotocols is supported (${offered.join(', ')})`);
    const { rt, c } = this.kubelet.runningContainer(ns, pod, query.get('container') ?? undefined);
    const env = this.kubelet.envFor(rt, c.spec);
    const tty = query.get('tty') === 'true';
    const wantStdin = query.get('stdin') === 'true';
    this.wss.handleUpgrade(req, socket, head, (ws) => this.session(ws, command, rt.dir, env, tty, wantStdin));
  }

  private session(ws: WebSocket, command: string[], cwd: string, env: NodeJS.ProcessEnv, tty: boolean, wantStdin: boolean): void {
    const [file, ...args] = command as [string, ...string[]];
    const proc = spawn(file, args, { cwd, env, stdio: ['pipe', 'pipe', 'pipe'] });
    if (!wantStdin) proc.stdin.end();
    proc.stdin.on('error', () => undefined);
    let finished = false;
    const send = (b: Buffer): void => {
      if (ws.readyState === ws.OPEN) ws.send(b);
    };
    proc.stdout.on('data', (d: Buffer) => send(frame(STDOUT, d)));
    proc.stderr.on('data', (d: Buffer) => send(frame(tty ? STDOUT : STDERR, d)));
    const finish = (status: Record<string, unknown>): void => {
      if (finished) return;
      finished = true;
      send(frame(ERROR, JSON.stringify(status)));
      if (ws.readyState === ws.OPEN) ws.close(1000);
    };
    let spawnError: Error | undefined;
    proc.on('error', (err) => {
      spawnError = err;
    });
    proc.on('close', (code, signal) => {
      if (spawnError) {
        const message = `OCI runtime exec failed: exec failed: unable to start container process: exec: "${file}": executable file not found in $PATH: unknown`;
        return finish({ metadata: {}, status: 'Failure', message, reason: 'InternalError', details: { causes: [{ message }] } });
      }
      const exitCode = code ?? (signal === 'SIGKILL' ? 137 : 143);
      if (exitCode === 0) return finish({ metadata: {}, status: 'Success' });
      finish({
        metadata: {},
        status: 'Failure',
        message: `command terminated with non-zero exit code: error executing command [${command.join(' ')}], exit code ${exitCode}`,
        reason: 'NonZeroExitCode',
        details: { causes: [{ reason: 'ExitCode', message: String(exitCode) }] },
      });
    });
    ws.on('message', (data: Buffer) => {
      const channel = data[0];
      if (channel === STDIN) proc.stdin.write(data.subarray(1));
      else if (channel === CLOSE && data[1] === STDIN) proc.stdin.end();
      else if (channel === RESIZE) return;
    });
    ws.on('close', () => {
      if (!finished && proc.exitCode === null) proc.kill('SIGKILL');
    });
  }

  close(): void {
    for (const c of this.wss.clients) c.terminate();
    this.wss.close();
  }
}
