import type { Socket } from 'node:net';
import { PaddockError } from '@paddock/contracts';
import { connectUnix, readReply, sendLine } from './socket-io';

/**
 * A TCP connection to a port on a sandbox's own loopback, through its supervisor: the supervisor
 * forks a handler that enters only the sandbox's network namespace, connects, drops to the
 * sandbox user and copies bytes between that connection and this Unix socket. The socket is
 * returned once the connection stands, as a plain byte stream (end() half-closes towards the
 * sandbox; the sandbox closing ends it).
 */
export async function connectSandboxPort(socketPath: string, sandboxId: string, port: number, onNotRunning: () => PaddockError): Promise<Socket> {
  const sock = await connectUnix(socketPath);
  try {
    sendLine(sock, { op: 'connect', port });
    const reply = await readReply(sock);
    if (reply.ok === true) {
      sock.setNoDelay(true);
      return sock;
    }
    if (reply.errno === 'ENOTRUNNING') throw onNotRunning();
    throw new PaddockError('unavailable', `sandbox ${sandboxId}: ${reply.message ?? `port ${port} is not reachable`}`, {
      reason: 'CWSANDBOX_SERVICE_UNAVAILABLE',
      metadata: { port: String(port) },
    });
  } catch (e) {
    sock.destroy();
    throw e;
  }
}
