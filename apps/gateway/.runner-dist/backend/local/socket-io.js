"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.connectUnix = connectUnix;
exports.sendLine = sendLine;
exports.readLine = readLine;
exports.readReply = readReply;
exports.request = request;
const node_net_1 = require("node:net");
/** Connects to a Unix socket; rejects with the errno error (ENOENT, ECONNREFUSED...) if nobody listens. */
function connectUnix(path) {
    return new Promise((resolve, reject) => {
        const sock = (0, node_net_1.connect)(path);
        const onError = (e) => {
            sock.destroy();
            reject(e);
        };
        sock.once('error', onError);
        sock.once('connect', () => {
            sock.off('error', onError);
            resolve(sock);
        });
    });
}
function sendLine(sock, obj) {
    sock.write(`${JSON.stringify(obj)}\n`);
}
/**
 * Reads one newline-terminated line without consuming anything after it: the rest is pushed back
 * (`unshift`) so the socket can then be handed to a consumer as a raw byte stream.
 */
function readLine(sock) {
    return new Promise((resolve, reject) => {
        let buf = Buffer.alloc(0);
        const cleanup = () => {
            sock.off('readable', onReadable);
            sock.off('end', onEnd);
            sock.off('close', onEnd);
            sock.off('error', onError);
        };
        const onReadable = () => {
            for (;;) {
                const chunk = sock.read();
                if (chunk === null)
                    return;
                const nl = chunk.indexOf(10);
                if (nl >= 0) {
                    cleanup();
                    const rest = chunk.subarray(nl + 1);
                    if (rest.length > 0)
                        sock.unshift(rest);
                    resolve(Buffer.concat([buf, chunk.subarray(0, nl)]).toString('utf8'));
                    return;
                }
                buf = Buffer.concat([buf, chunk]);
            }
        };
        const onEnd = () => {
            cleanup();
            reject(new Error('the sandbox supervisor closed the connection before replying'));
        };
        const onError = (e) => {
            cleanup();
            reject(e);
        };
        sock.on('readable', onReadable);
        sock.once('end', onEnd);
        sock.once('close', onEnd);
        sock.once('error', onError);
        onReadable();
    });
}
async function readReply(sock) {
    return JSON.parse(await readLine(sock));
}
/** One request/one reply (stop, ping). */
async function request(path, body) {
    const sock = await connectUnix(path);
    try {
        sendLine(sock, body);
        return await readReply(sock);
    }
    finally {
        sock.destroy();
    }
}
//# sourceMappingURL=socket-io.js.map