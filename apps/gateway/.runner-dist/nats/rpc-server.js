"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.RunnerRpcServer = void 0;
const contracts_1 = require("@paddock/contracts");
const errors_1 = require("../service/errors");
function parse(schema, body) {
    const r = schema.safeParse(body);
    if (!r.success)
        throw (0, errors_1.invalidRequest)(r.error);
    return r.data;
}
function statToWire(s) {
    return { path: s.path, type: s.type, size: s.size, mode: s.mode, modifiedAt: s.modifiedAt.toISOString() };
}
/**
 * Serves the runner's RPC subjects with plain core-NATS request/reply in the runner's queue group.
 *
 * Why not `@nats-io/services`: on the pinned 3.3.1 line it only exists as a prerelease
 * (3.0.0-25, TOOLCHAIN.md §1), and all it would add here is `$SRV` discovery and stats. The
 * envelope (`{ ok, result } | { ok: false, error: ApiErrorBody }`) and the subject scheme live in
 * `@paddock/contracts`, so moving to the services framework later changes only this file.
 */
class RunnerRpcServer {
    constructor(nc, runnerId, service, backend, streams, log) {
        this.nc = nc;
        this.runnerId = runnerId;
        this.log = log;
        this.inFlight = 0;
        const fileOp = async (path, fn) => {
            try {
                return await fn();
            }
            catch (e) {
                throw (0, errors_1.toPaddockError)(e, { path });
            }
        };
        this.handlers = {
            create: async (b) => ({ sandbox: await service.create(b) }),
            get: async (b) => ({ sandbox: service.get(b) }),
            list: async (b) => ({ sandboxes: service.list(b) }),
            delete: async (b) => service.delete(b),
            exec: (b) => service.exec(b),
            execStream: (b) => streams.execStream(b),
            readFile: (b) => streams.readFile(b),
            writeFile: (b) => streams.writeFile(b),
            logs: (b) => streams.logs(b),
            listDir: async (b) => {
                const req = parse(contracts_1.ListDirRequestSchema, b);
                service.requireRunning(req.organizationId, req.sandboxId);
                const entries = await fileOp(req.path, () => backend.listDir(req.sandboxId, req.path));
                return { entries: entries.map(statToWire) };
            },
            stat: async (b) => {
                const req = parse(contracts_1.StatRequestSchema, b);
                service.requireRunning(req.organizationId, req.sandboxId);
                return { stat: statToWire(await fileOp(req.path, () => backend.stat(req.sandboxId, req.path))) };
            },
            remove: async (b) => {
                const req = parse(contracts_1.RemoveRequestSchema, b);
                service.requireRunning(req.organizationId, req.sandboxId);
                await fileOp(req.path, () => backend.remove(req.sandboxId, req.path, req.recursive));
                return {};
            },
        };
    }
    start() {
        this.sub = this.nc.subscribe(contracts_1.subjects.runnerRpcAll(this.runnerId), {
            queue: contracts_1.queueGroups.runner(this.runnerId),
            callback: (err, msg) => {
                if (err) {
                    this.log.error('RPC subscription failed', { error: err.message });
                    return;
                }
                void this.handle(msg);
            },
        });
    }
    /** Stops taking new requests and waits (bounded) for the in-flight ones to reply. */
    async stop(timeoutMs = 5_000) {
        this.sub?.unsubscribe();
        const deadline = Date.now() + timeoutMs;
        while (this.inFlight > 0 && Date.now() < deadline)
            await new Promise((r) => setTimeout(r, 10));
    }
    async handle(msg) {
        const op = msg.subject.slice(msg.subject.lastIndexOf('.') + 1);
        this.inFlight++;
        let reply;
        try {
            if (!contracts_1.RUNNER_RPC_OPS.includes(op)) {
                throw new contracts_1.PaddockError('unimplemented', `unknown runner operation ${op}`, { reason: 'CWSANDBOX_INVALID_REQUEST' });
            }
            let body;
            try {
                body = msg.data.length ? JSON.parse(new TextDecoder().decode(msg.data)) : {};
            }
            catch {
                throw new contracts_1.PaddockError('invalid_argument', 'request body is not valid JSON', { reason: 'CWSANDBOX_INVALID_REQUEST' });
            }
            reply = { ok: true, result: await this.handlers[op](body) };
        }
        catch (e) {
            const err = (0, errors_1.toPaddockError)(e);
            if (err.code === 'internal')
                this.log.error('RPC failed', { op, error: err.message });
            reply = { ok: false, error: err.toBody() };
        }
        finally {
            this.inFlight--;
        }
        if (msg.reply)
            msg.respond(JSON.stringify(reply));
    }
}
exports.RunnerRpcServer = RunnerRpcServer;
//# sourceMappingURL=rpc-server.js.map