"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.StreamEndpoint = void 0;
const contracts_1 = require("@paddock/contracts");
/**
 * One end of a flow-controlled stream over two NATS subjects (the protocol of
 * `@paddock/contracts` runner-rpc: binary frames, cumulative credit grants).
 *
 * Sending: `sendCredited` resolves once the frame is published, which happens only when the
 * peer's grant allows it. A producer that awaits it (a `for await` over a child's stdout) stops
 * pulling, the pipe fills and the process blocks: memory stays bounded end to end. Frames are
 * published strictly in call order.
 *
 * Receiving: every frame goes to `onFrame`. For a credited frame the handler calls
 * `consumed(seq)` once the payload has been handed on (e.g. written to the process's stdin);
 * only then does this end grant more.
 */
class StreamEndpoint {
    constructor(nc, opts) {
        this.nc = nc;
        this.opts = opts;
        this.onFrame = () => undefined;
        /** Called once when the stream fails (bad frame from the peer, credit timeout) or closes. */
        this.onClose = () => undefined;
        this.queue = [];
        this.closed = false;
        this.send = new contracts_1.SendWindow(opts.initialSendGrant);
        this.recv = new contracts_1.ReceiveWindow(opts.recvWindow);
        this.sub = nc.subscribe(opts.recvSubject, {
            callback: (err, msg) => {
                if (err)
                    return this.close(err);
                this.receive(msg.data);
            },
        });
    }
    get isClosed() {
        return this.closed;
    }
    /** Sends a payload-carrying frame (stdout/stderr/stdin/data) once credit allows. */
    sendCredited(header, payload) {
        if (this.closed)
            return Promise.reject(new Error('stream closed'));
        if (this.queue.length === 0 && this.send.canSend()) {
            this.publish({ ...header, seq: this.send.next() }, payload);
            return Promise.resolve();
        }
        return new Promise((resolve, reject) => {
            const timer = setTimeout(() => {
                this.close(new contracts_1.PaddockError('deadline_exceeded', `stream peer granted no credit for ${this.opts.idleTimeoutMs} ms; stream abandoned`, {
                    reason: 'CWSANDBOX_INTERNAL',
                }));
            }, this.opts.idleTimeoutMs);
            timer.unref();
            this.queue.push({ header, payload, resolve, reject, timer });
        });
    }
    /** Sends a control frame (never held back by the window). */
    sendControl(header) {
        if (this.closed)
            return;
        this.publish(header, undefined);
    }
    /** Marks an inbound credited frame as handed on; grants more credit when half the window is used. */
    consumed(seq) {
        if (this.closed)
            return;
        let grant;
        try {
            grant = this.recv.onFrame(seq);
        }
        catch (e) {
            return this.close(e);
        }
        if (grant !== undefined)
            this.publish({ kind: 'credit', grant }, undefined);
    }
    /** Applies a grant received out of band (an op's reply carries the runner's first grant). */
    applyGrant(total) {
        this.send.grant(total);
        this.drain();
    }
    /** Initial grant this end announces to the peer (its receive window). */
    get recvWindow() {
        return this.recv.window;
    }
    /** Stops receiving; pending sends fail. Idempotent. */
    close(err) {
        if (this.closed)
            return;
        this.closed = true;
        this.sub.unsubscribe();
        for (const p of this.queue.splice(0)) {
            clearTimeout(p.timer);
            p.reject(err ?? new Error('stream closed'));
        }
        this.onClose(err);
    }
    receive(body) {
        let frame;
        try {
            frame = (0, contracts_1.decodeFrame)(body);
        }
        catch (e) {
            return this.close(e);
        }
        if (frame.header.kind === 'credit') {
            if (frame.header.grant !== undefined)
                this.send.grant(frame.header.grant);
            this.drain();
            return;
        }
        if ((0, contracts_1.isCreditedFrame)(frame.header.kind) && frame.header.seq === 0) {
            return this.close(new Error(`credited ${frame.header.kind} frame without a sequence number`));
        }
        this.onFrame(frame);
    }
    drain() {
        while (this.queue.length > 0 && this.send.canSend()) {
            const p = this.queue.shift();
            clearTimeout(p.timer);
            this.publish({ ...p.header, seq: this.send.next() }, p.payload);
            p.resolve();
        }
    }
    publish(header, payload) {
        this.nc.publish(this.opts.sendSubject, (0, contracts_1.encodeFrame)(header, payload));
    }
}
exports.StreamEndpoint = StreamEndpoint;
//# sourceMappingURL=stream-endpoint.js.map