"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.DEFAULT_MAX_OUTPUT_BYTES = void 0;
exports.startExec = startExec;
exports.runExec = runExec;
const node_crypto_1 = require("node:crypto");
const node_os_1 = require("node:os");
const contracts_1 = require("@paddock/contracts");
const socket_io_1 = require("./socket-io");
/**
 * Client side of the supervisor's exec protocol. Three connections per command: `ctl` (request,
 * start confirmation, kill/resize, exit status), `io` (the command's stdin and stdout: the socket
 * itself is its fd 0 and 1) and `err` (its fd 2). Data never passes through another process, so
 * backpressure is the kernel's: a consumer that stops reading stops the command.
 */
async function startExec(socketPath, req, onNotRunning) {
    const id = (0, node_crypto_1.randomUUID)();
    const [ctl, io, err] = await Promise.all([(0, socket_io_1.connectUnix)(socketPath), (0, socket_io_1.connectUnix)(socketPath), (0, socket_io_1.connectUnix)(socketPath)]);
    (0, socket_io_1.sendLine)(ctl, { op: 'exec', role: 'ctl', id, argv: req.argv, env: req.env, cwd: req.cwd, tty: !!req.tty, cols: req.cols, rows: req.rows });
    (0, socket_io_1.sendLine)(io, { op: 'attach', role: 'io', id });
    (0, socket_io_1.sendLine)(err, { op: 'attach', role: 'err', id });
    let first;
    try {
        first = await (0, socket_io_1.readReply)(ctl);
    }
    catch (e) {
        for (const s of [ctl, io, err])
            s.destroy();
        throw new contracts_1.PaddockError('unavailable', `exec failed: ${e.message}`, { reason: 'CWSANDBOX_INTERNAL' });
    }
    if (first.ok === false) {
        for (const s of [ctl, io, err])
            s.destroy();
        if (first.errno === 'ENOTRUNNING')
            throw onNotRunning();
        throw new contracts_1.PaddockError('internal', `exec failed inside the sandbox: ${first.message ?? 'unknown error'}`, {
            reason: 'CWSANDBOX_INTERNAL',
        });
    }
    const exited = new Promise((resolve) => {
        const settle = (reply) => {
            resolve({
                exitCode: typeof reply.exit === 'number' ? reply.exit : null,
                signal: typeof reply.signal === 'string' ? reply.signal : null,
            });
            ctl.destroy();
        };
        if ('exit' in first) {
            settle(first);
            return;
        }
        (0, socket_io_1.readReply)(ctl).then(settle, () => resolve({ exitCode: null, signal: 'SIGKILL' }));
    });
    // Keep the runner alive only through the consumer's own handles.
    ctl.on('error', () => undefined);
    return {
        stdin: io,
        stdout: io,
        stderr: err,
        resize(cols, rows) {
            if (!ctl.destroyed)
                (0, socket_io_1.sendLine)(ctl, { resize: [cols, rows] });
        },
        kill(signal = 'SIGKILL') {
            if (!ctl.destroyed)
                (0, socket_io_1.sendLine)(ctl, { kill: signal });
        },
        exited,
    };
}
/** Collects a stream up to `cap` bytes while counting everything it produced. */
function capture(stream, cap) {
    return new Promise((resolve) => {
        const parts = [];
        let kept = 0;
        let bytes = 0;
        stream.on('data', (chunk) => {
            bytes += chunk.length;
            if (kept < cap) {
                const part = chunk.subarray(0, cap - kept);
                parts.push(part);
                kept += part.length;
            }
        });
        const done = () => resolve({ data: Buffer.concat(parts), bytes, truncated: bytes > kept });
        stream.once('end', done);
        stream.once('close', done);
        stream.once('error', () => undefined);
    });
}
exports.DEFAULT_MAX_OUTPUT_BYTES = 10 * 1024 * 1024;
/** Unary exec on top of the streaming one: stdin written whole, outputs captured with caps, timeout kills the tree. */
async function runExec(proc, req) {
    const cap = req.maxOutputBytes ?? exports.DEFAULT_MAX_OUTPUT_BYTES;
    const io = proc.stdout;
    const err = proc.stderr;
    const out = capture(io, cap);
    const errOut = capture(err, cap);
    io.on('error', () => undefined);
    if (req.stdin && req.stdin.length > 0)
        io.end(req.stdin);
    else
        io.end();
    let timedOut = false;
    const timer = req.timeoutMs && req.timeoutMs > 0
        ? setTimeout(() => {
            timedOut = true;
            proc.kill('SIGKILL');
        }, req.timeoutMs)
        : undefined;
    const status = await proc.exited;
    if (timer)
        clearTimeout(timer);
    // A background process may keep the pipes open after the command exits: give it a moment, then cut.
    const cut = setTimeout(() => {
        io.destroy();
        err.destroy();
    }, 1000);
    const [o, e] = await Promise.all([out, errOut]);
    clearTimeout(cut);
    const exitCode = status.exitCode ?? 128 + signalNumber(status.signal);
    return {
        exitCode,
        stdout: o.data,
        stderr: e.data,
        stdoutTruncated: o.truncated,
        stderrTruncated: e.truncated,
        stdoutBytes: o.bytes,
        stderrBytes: e.bytes,
        timedOut,
    };
}
function signalNumber(sig) {
    return sig ? (node_os_1.constants.signals[sig] ?? 0) : 0;
}
//# sourceMappingURL=exec-client.js.map