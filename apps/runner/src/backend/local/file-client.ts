import type { Readable } from 'node:stream';
import type { FileStat } from '../sandbox-backend';
import { fileError } from './errors';
import { connectUnix, readReply, sendLine, type SupervisorReply } from './socket-io';

/**
 * Client side of the supervisor's file protocol. Each operation runs in a handler that entered the
 * sandbox's mount namespace as the sandbox user, so paths resolve inside the sandbox root
 * (symlinks cannot escape it) and permissions are the sandbox's own.
 */
export class FileClient {
  constructor(
    private readonly socketPath: string,
    private readonly sandboxId: string,
  ) {}

  private fail(path: string, reply: SupervisorReply): never {
    throw fileError(this.sandboxId, path, reply.errno ?? 'EIO', reply.message ?? 'unknown error');
  }

  async read(path: string): Promise<Readable> {
    const sock = await connectUnix(this.socketPath);
    sendLine(sock, { op: 'file', action: 'read', path });
    sock.end();
    const reply = await readReply(sock).catch((e: Error) => {
      sock.destroy();
      throw e;
    });
    if (!reply.ok) {
      sock.destroy();
      this.fail(path, reply);
    }
    return sock;
  }

  async write(path: string, content: Readable | Buffer, mode?: number): Promise<number> {
    const sock = await connectUnix(this.socketPath);
    sock.on('error', () => undefined);
    sendLine(sock, { op: 'file', action: 'write', path, ...(mode !== undefined ? { mode } : {}) });
    if (Buffer.isBuffer(content)) {
      sock.end(content);
    } else {
      content.once('error', () => sock.destroy());
      content.pipe(sock);
    }
    try {
      const reply = await readReply(sock);
      if (!reply.ok) this.fail(path, reply);
      return Number(reply.bytes ?? 0);
    } finally {
      sock.destroy();
    }
  }

  private async simple(action: string, path: string, extra: Record<string, unknown> = {}): Promise<SupervisorReply> {
    const sock = await connectUnix(this.socketPath);
    try {
      sendLine(sock, { op: 'file', action, path, ...extra });
      sock.end();
      const reply = await readReply(sock);
      if (!reply.ok) this.fail(path, reply);
      return reply;
    } finally {
      sock.destroy();
    }
  }

  async list(path: string): Promise<FileStat[]> {
    const reply = await this.simple('list', path);
    return (reply.entries as WireEntry[]).map(toStat);
  }

  async stat(path: string): Promise<FileStat> {
    const reply = await this.simple('stat', path);
    return toStat(reply.entry as WireEntry);
  }

  async remove(path: string, recursive: boolean): Promise<void> {
    await this.simple('remove', path, { recursive });
  }
}

interface WireEntry {
  path: string;
  type: FileStat['type'];
  size: number;
  mode: number;
  mtime: number;
}

function toStat(e: WireEntry): FileStat {
  return { path: e.path, type: e.type, size: e.size, mode: e.mode, modifiedAt: new Date(e.mtime * 1000) };
}
