"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.FileClient = void 0;
const errors_1 = require("./errors");
const socket_io_1 = require("./socket-io");
/**
 * Client side of the supervisor's file protocol. Each operation runs in a handler that entered the
 * sandbox's mount namespace as the sandbox user, so paths resolve inside the sandbox root
 * (symlinks cannot escape it) and permissions are the sandbox's own.
 */
class FileClient {
    constructor(socketPath, sandboxId) {
        this.socketPath = socketPath;
        this.sandboxId = sandboxId;
    }
    fail(path, reply) {
        throw (0, errors_1.fileError)(this.sandboxId, path, reply.errno ?? 'EIO', reply.message ?? 'unknown error');
    }
    async read(path) {
        const sock = await (0, socket_io_1.connectUnix)(this.socketPath);
        (0, socket_io_1.sendLine)(sock, { op: 'file', action: 'read', path });
        sock.end();
        const reply = await (0, socket_io_1.readReply)(sock).catch((e) => {
            sock.destroy();
            throw e;
        });
        if (!reply.ok) {
            sock.destroy();
            this.fail(path, reply);
        }
        return sock;
    }
    async write(path, content, mode) {
        const sock = await (0, socket_io_1.connectUnix)(this.socketPath);
        sock.on('error', () => undefined);
        (0, socket_io_1.sendLine)(sock, { op: 'file', action: 'write', path, ...(mode !== undefined ? { mode } : {}) });
        if (Buffer.isBuffer(content)) {
            sock.end(content);
        }
        else {
            content.once('error', () => sock.destroy());
            content.pipe(sock);
        }
        try {
            const reply = await (0, socket_io_1.readReply)(sock);
            if (!reply.ok)
                this.fail(path, reply);
            return Number(reply.bytes ?? 0);
        }
        finally {
            sock.destroy();
        }
    }
    async simple(action, path, extra = {}) {
        const sock = await (0, socket_io_1.connectUnix)(this.socketPath);
        try {
            (0, socket_io_1.sendLine)(sock, { op: 'file', action, path, ...extra });
            sock.end();
            const reply = await (0, socket_io_1.readReply)(sock);
            if (!reply.ok)
                this.fail(path, reply);
            return reply;
        }
        finally {
            sock.destroy();
        }
    }
    async list(path) {
        const reply = await this.simple('list', path);
        return reply.entries.map(toStat);
    }
    async stat(path) {
        const reply = await this.simple('stat', path);
        return toStat(reply.entry);
    }
    async remove(path, recursive) {
        await this.simple('remove', path, { recursive });
    }
}
exports.FileClient = FileClient;
function toStat(e) {
    return { path: e.path, type: e.type, size: e.size, mode: e.mode, modifiedAt: new Date(e.mtime * 1000) };
}
//# sourceMappingURL=file-client.js.map