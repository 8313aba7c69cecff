"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.StreamHandlers = void 0;
const node_stream_1 = require("node:stream");
const contracts_1 = require("@paddock/contracts");
const errors_1 = require("../service/errors");
const stream_endpoint_1 = require("./stream-endpoint");
function parse(schema, body) {
    const r = schema.safeParse(body);
    if (!r.success)
        throw (0, errors_1.invalidRequest)(r.error);
    return r.data;
}
/**
 * The streaming ops. Each handler validates, opens the runner's end of the stream (subscribed
 * before the reply goes out, so no caller frame can be missed), replies at once, and keeps
 * pumping frames in the background until `exit`/`eof`/`error`.
 */
class StreamHandlers {
    constructor(d) {
        this.d = d;
    }
    open(streamId, initialCredit) {
        return new stream_endpoint_1.StreamEndpoint(this.d.nc, {
            sendSubject: contracts_1.subjects.streamFromRunner(this.d.runnerId, streamId),
            recvSubject: contracts_1.subjects.streamToRunner(this.d.runnerId, streamId),
            initialSendGrant: initialCredit,
            recvWindow: contracts_1.DEFAULT_STREAM_WINDOW,
            idleTimeoutMs: this.d.idleTimeoutMs,
        });
    }
    fail(ep, e, context = {}) {
        ep.sendControl({ kind: 'error', error: (0, errors_1.toPaddockError)(e, context).toBody() });
        ep.close();
    }
    async execStream(body) {
        const req = parse(contracts_1.ExecStreamRequestSchema, body);
        this.d.service.requireRunning(req.organizationId, req.sandboxId);
        const proc = await this.d.backend.execStream(req.sandboxId, {
            argv: req.argv,
            env: req.env,
            ...(req.cwd ? { cwd: req.cwd } : {}),
            tty: req.tty,
            ...(req.cols ? { cols: req.cols } : {}),
            ...(req.rows ? { rows: req.rows } : {}),
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
            }
            else if (header.kind === 'stdinEof') {
                proc.stdin.end();
            }
            else if (header.kind === 'resize') {
                if (header.cols && header.rows)
                    proc.resize(header.cols, header.rows);
            }
            else if (header.kind === 'cancel') {
                proc.kill('SIGKILL');
                ep.close();
            }
        };
        ep.onClose = (err) => {
            // A stream that dies (caller gone, credit timeout) must not leave the command running.
            if (err)
                proc.kill('SIGKILL');
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
            }
            catch (e) {
                proc.kill('SIGKILL');
                this.fail(ep, e);
            }
            finally {
                if (timer)
                    clearTimeout(timer);
            }
        })();
        return { streamId: req.streamId, stdinCredit: ep.recvWindow };
    }
    async logs(body) {
        const req = parse(contracts_1.LogsRequestSchema, body);
        this.d.service.find(req.organizationId, req.sandboxId);
        const ep = this.open(req.streamId, req.initialCredit);
        const abort = new AbortController();
        ep.onFrame = ({ header }) => {
            if (header.kind === 'cancel')
                ep.close();
        };
        ep.onClose = () => abort.abort();
        const chunks = this.d.backend.logs(req.sandboxId, {
            follow: req.follow,
            ...(req.tailLines !== undefined ? { tailLines: req.tailLines } : {}),
            ...(req.sinceTime !== undefined ? { sinceTime: new Date(req.sinceTime) } : {}),
            ...(req.fromOffset !== undefined ? { fromOffset: req.fromOffset } : {}),
            signal: abort.signal,
        });
        void (async () => {
            try {
                for await (const c of chunks) {
                    const time = c.time.toISOString();
                    for (let off = 0; off < c.data.length; off += contracts_1.STREAM_CHUNK_BYTES) {
                        const piece = c.data.subarray(off, off + contracts_1.STREAM_CHUNK_BYTES);
                        await ep.sendCredited({ kind: c.stream, offset: c.offset + off, time }, piece);
                    }
                }
                ep.sendControl({ kind: 'eof' });
                ep.close();
            }
            catch (e) {
                if (!ep.isClosed)
                    this.fail(ep, e);
            }
        })();
        return { streamId: req.streamId, stdinCredit: 0 };
    }
    async readFile(body) {
        const req = parse(contracts_1.ReadFileRequestSchema, body);
        this.d.service.requireRunning(req.organizationId, req.sandboxId);
        const ctx = { path: req.path };
        const st = await this.d.backend.stat(req.sandboxId, req.path).catch((e) => {
            throw (0, errors_1.toPaddockError)(e, ctx);
        });
        if (st.type === 'directory')
            throw (0, errors_1.toPaddockError)(Object.assign(new Error('is a directory'), { code: 'EISDIR' }), ctx);
        if (req.streamId === undefined) {
            if (st.size > contracts_1.MAX_INLINE_FILE_BYTES)
                throw errors_1.runnerErrors.fileTooLarge(req.path, st.size, contracts_1.MAX_INLINE_FILE_BYTES);
            const content = await this.d.backend.readFile(req.sandboxId, req.path).then((r) => collect(r, contracts_1.MAX_INLINE_FILE_BYTES, req.path), (e) => {
                throw (0, errors_1.toPaddockError)(e, ctx);
            });
            return { streamed: false, contentBase64: content.toString('base64'), size: content.length };
        }
        const readable = await this.d.backend.readFile(req.sandboxId, req.path).catch((e) => {
            throw (0, errors_1.toPaddockError)(e, ctx);
        });
        const ep = this.open(req.streamId, req.initialCredit);
        ep.onFrame = ({ header }) => {
            if (header.kind === 'cancel')
                ep.close();
        };
        ep.onClose = () => readable.destroy();
        void (async () => {
            try {
                let total = 0;
                for await (const chunk of readable) {
                    for (let off = 0; off < chunk.length; off += contracts_1.STREAM_CHUNK_BYTES) {
                        const piece = chunk.subarray(off, off + contracts_1.STREAM_CHUNK_BYTES);
                        await ep.sendCredited({ kind: 'data' }, piece);
                        total += piece.length;
                    }
                }
                ep.sendControl({ kind: 'eof', totalBytes: total });
                ep.close();
            }
            catch (e) {
                if (!ep.isClosed)
                    this.fail(ep, e, ctx);
            }
        })();
        return { streamed: true, size: st.size };
    }
    async writeFile(body) {
        const req = parse(contracts_1.WriteFileRequestSchema, body);
        this.d.service.requireRunning(req.organizationId, req.sandboxId);
        const ctx = { path: req.path };
        if (req.streamId === undefined) {
            const content = Buffer.from(req.contentBase64 ?? '', 'base64');
            await this.d.backend.writeFile(req.sandboxId, req.path, content, req.mode).catch((e) => {
                throw (0, errors_1.toPaddockError)(e, ctx);
            });
            return { streamed: false, bytesWritten: content.length };
        }
        const ep = this.open(req.streamId, 1);
        // The PassThrough's own buffer plus the credit window bound what an upload holds in memory.
        const upload = new node_stream_1.PassThrough({ highWaterMark: contracts_1.STREAM_CHUNK_BYTES });
        let total = 0;
        ep.onFrame = ({ header, payload }) => {
            if (header.kind === 'data') {
                total += payload.length;
                upload.write(payload, () => ep.consumed(header.seq));
            }
            else if (header.kind === 'eof') {
                upload.end();
            }
            else if (header.kind === 'cancel') {
                upload.destroy(new Error('upload cancelled by the caller'));
                ep.close();
            }
        };
        ep.onClose = (err) => {
            if (err)
                upload.destroy(err);
        };
        upload.on('error', () => undefined);
        this.d.backend.writeFile(req.sandboxId, req.path, upload, req.mode).then(() => {
            ep.sendControl({ kind: 'eof', totalBytes: total });
            ep.close();
        }, (e) => {
            if (!ep.isClosed)
                this.fail(ep, e, ctx);
        });
        return { streamed: true, stdinCredit: ep.recvWindow };
    }
}
exports.StreamHandlers = StreamHandlers;
/** Pumps a child's output into credited frames; awaiting credit stops pulling (backpressure). */
async function pump(ep, readable, kind) {
    for await (const chunk of readable) {
        for (let off = 0; off < chunk.length; off += contracts_1.STREAM_CHUNK_BYTES) {
            const header = { kind };
            await ep.sendCredited(header, chunk.subarray(off, off + contracts_1.STREAM_CHUNK_BYTES));
        }
    }
}
async function collect(readable, limit, path) {
    const parts = [];
    let size = 0;
    for await (const chunk of readable) {
        size += chunk.length;
        if (size > limit) {
            readable.destroy();
            throw errors_1.runnerErrors.fileTooLarge(path, size, limit);
        }
        parts.push(chunk);
    }
    return Buffer.concat(parts);
}
const SIGNALS = { SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGKILL: 9, SIGTERM: 15, SIGPIPE: 13 };
function signalNumber(s) {
    return SIGNALS[s] ?? 0;
}
//# sourceMappingURL=stream-handlers.js.map