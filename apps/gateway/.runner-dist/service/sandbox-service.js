"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.SandboxService = void 0;
const contracts_1 = require("@paddock/contracts");
const errors_1 = require("./errors");
const launch_spec_1 = require("./launch-spec");
const sandbox_record_1 = require("./sandbox-record");
function parse(schema, body) {
    const r = schema.safeParse(body);
    if (!r.success)
        throw (0, errors_1.invalidRequest)(r.error);
    return r.data;
}
/**
 * The runner's sandbox bookkeeping: admission (policy, capacity, idempotency), the lifecycle
 * registry fed by backend events, lifetime enforcement, and the unary operations. Transport-free:
 * the NATS layer calls it with decoded bodies and turns thrown PaddockErrors into error replies.
 */
class SandboxService {
    constructor(deps) {
        this.records = new Map();
        this.lifetimeTimers = new Map();
        this.d = deps;
        deps.backend.onEvent((e) => this.onBackendEvent(e));
    }
    // -------------------------------------------------------------------------------------------
    // lifecycle operations
    // -------------------------------------------------------------------------------------------
    /**
     * Admits and launches a sandbox, replying before it runs (seed 002). Idempotent by sandboxId: a
     * redelivered create returns the existing sandbox; the same id with another spec is refused.
     */
    async create(body) {
        const req = parse(contracts_1.CreateSandboxRequestSchema, body);
        const fingerprint = (0, sandbox_record_1.canonicalJson)({ organizationId: req.organizationId, spec: req.spec, labels: req.labels ?? {} });
        const existing = this.records.get(req.sandboxId);
        if (existing) {
            if (existing.requestFingerprint !== fingerprint)
                throw errors_1.runnerErrors.alreadyExists(req.sandboxId);
            return this.view(existing);
        }
        const capabilities = this.d.backend.capabilities();
        const decision = this.d.policy.resolve(req.spec, capabilities);
        if (!decision.ok)
            throw errors_1.runnerErrors.policyViolation(decision.violations);
        const { resolved } = decision;
        const allocation = (0, launch_spec_1.allocationOf)(resolved);
        this.checkCapacity(allocation);
        // Registered before the first await: a concurrent redelivery of this create finds it.
        const now = this.d.clock.now();
        const meta = {
            v: 1,
            organizationId: req.organizationId,
            spec: req.spec,
            labels: req.labels ?? {},
            effective: (0, launch_spec_1.effectiveFieldsOf)(resolved),
            requestFingerprint: fingerprint,
            createTime: now.toISOString(),
            cpuMillis: allocation.cpuMillis,
            memoryBytes: allocation.memoryBytes,
        };
        const rec = {
            sandboxId: req.sandboxId,
            organizationId: req.organizationId,
            spec: req.spec,
            labels: meta.labels,
            effective: meta.effective,
            requestFingerprint: fingerprint,
            state: 'STATE_PENDING',
            createTime: now,
            sequence: (0, sandbox_record_1.nextSequence)(0, now),
            allocation,
            deadline: new Date(now.getTime() + resolved.lifetimeSeconds * 1000),
        };
        this.records.set(rec.sandboxId, rec);
        this.emit(rec);
        this.armLifetime(rec);
        const launch = (0, launch_spec_1.toLaunchSpec)({
            sandboxId: rec.sandboxId,
            organizationId: rec.organizationId,
            runnerId: this.d.identity.runnerId,
            spec: req.spec,
            resolved,
            caps: this.d.caps,
            meta,
        });
        try {
            await this.d.backend.launch(launch);
        }
        catch (e) {
            this.transition(rec.sandboxId, {
                state: 'STATE_FAILED',
                reason: 'FAILED_TO_START',
                message: (0, errors_1.toPaddockError)(e).message,
                at: this.d.clock.now(),
            });
        }
        return this.view(this.mustGet(rec.sandboxId));
    }
    get(body) {
        const req = parse(contracts_1.GetSandboxRequestSchema, body);
        return this.view(this.find(req.organizationId, req.sandboxId));
    }
    list(body) {
        const req = parse(contracts_1.ListSandboxesRequestSchema, body);
        const out = [];
        for (const rec of this.records.values()) {
            if (rec.organizationId !== req.organizationId)
                continue;
            if (!req.showTerminated && (0, contracts_1.isTerminalSandboxState)(rec.state))
                continue;
            if (req.states?.length && !req.states.includes(rec.state))
                continue;
            const tags = rec.spec.tags ?? [];
            if (req.tags?.some((t) => !tags.includes(t)))
                continue;
            out.push(this.view(rec));
        }
        return out;
    }
    /** Stops a sandbox: replies with it in STATE_TERMINATING; the terminal state follows as an event. */
    delete(body) {
        const req = parse(contracts_1.DeleteSandboxRequestSchema, body);
        const rec = this.records.get(req.sandboxId);
        if (!rec || rec.organizationId !== req.organizationId) {
            if (req.allowMissing)
                return {};
            throw errors_1.runnerErrors.sandboxNotFound(req.sandboxId);
        }
        if ((0, contracts_1.isTerminalSandboxState)(rec.state) || rec.state === 'STATE_TERMINATING')
            return { sandbox: this.view(rec) };
        this.stop(rec.sandboxId, req.gracePeriodSeconds, 'STOPPED_BY_USER');
        return { sandbox: this.view(this.mustGet(rec.sandboxId)) };
    }
    async exec(body) {
        const req = parse(contracts_1.ExecRequestSchema, body);
        this.requireRunning(req.organizationId, req.sandboxId);
        const r = await this.d.backend.exec(req.sandboxId, {
            argv: req.argv,
            env: req.env,
            ...(req.cwd ? { cwd: req.cwd } : {}),
            ...(req.timeoutSeconds ? { timeoutMs: Math.round(req.timeoutSeconds * 1000) } : {}),
            maxOutputBytes: req.maxOutputBytes || contracts_1.DEFAULT_MAX_OUTPUT_BYTES,
            ...(req.stdinBase64 !== undefined ? { stdin: Buffer.from(req.stdinBase64, 'base64') } : {}),
        });
        return {
            exitCode: r.exitCode,
            stdoutBase64: r.stdout.toString('base64'),
            stderrBase64: r.stderr.toString('base64'),
            stdoutTruncated: r.stdoutTruncated,
            stderrTruncated: r.stderrTruncated,
            stdoutBytesProduced: r.stdoutBytes,
            stderrBytesProduced: r.stderrBytes,
            timedOut: r.timedOut,
        };
    }
    /** Throws unless the sandbox exists for this organization and is RUNNING (exec, files, streams). */
    requireRunning(organizationId, sandboxId) {
        const rec = this.find(organizationId, sandboxId);
        if (rec.state === 'STATE_RUNNING')
            return rec;
        if ((0, contracts_1.isTerminalSandboxState)(rec.state) || rec.state === 'STATE_TERMINATING')
            throw errors_1.runnerErrors.terminated(sandboxId, rec.state);
        throw errors_1.runnerErrors.notRunning(sandboxId, rec.state);
    }
    /** Throws unless the sandbox exists for this organization (logs work in any state). */
    find(organizationId, sandboxId) {
        const rec = this.records.get(sandboxId);
        // Another tenant's sandbox is reported as absent, never as forbidden: ids are not a secret
        // channel between organizations.
        if (!rec || rec.organizationId !== organizationId)
            throw errors_1.runnerErrors.sandboxNotFound(sandboxId);
        return rec;
    }
    // -------------------------------------------------------------------------------------------
    // restart: adopt or reap
    // -------------------------------------------------------------------------------------------
    /**
     * Accounts for every sandbox the backend still runs after a runner restart. A sandbox whose
     * metadata is readable, that belongs to this runner and organization and whose deadline has not
     * passed is adopted with the spec resolved at its launch; anything else is reaped and reported
     * terminal with a reason. Nothing is left unaccounted for.
     */
    async recover() {
        const found = await this.d.backend.recover();
        const report = { adopted: [], reaped: [] };
        for (const r of found) {
            const verdict = this.judgeRecovered(r);
            if (verdict.adopt) {
                this.adopt(r, verdict.meta);
                report.adopted.push(r.sandboxId);
                continue;
            }
            try {
                await this.d.backend.reap(r.sandboxId, verdict.reason);
            }
            catch (e) {
                this.d.log.error('Failed to reap sandbox found at startup', { sandboxId: r.sandboxId, error: String(e) });
            }
            report.reaped.push({ sandboxId: r.sandboxId, reason: verdict.reason });
            this.recordReaped(r, verdict.meta, verdict.reason);
        }
        if (found.length)
            this.d.log.info('Recovered sandboxes', { adopted: report.adopted.length, reaped: report.reaped.length });
        return report;
    }
    judgeRecovered(r) {
        const meta = readMeta(r.labels);
        // Launched by another runner (a shared state dir, a renamed runner): not ours to serve.
        if (!meta || r.labels[launch_spec_1.RUNNER_ID_LABEL] !== this.d.identity.runnerId) {
            return { adopt: false, meta, reason: 'REAPED_UNKNOWN' };
        }
        if ((0, contracts_1.isTerminalSandboxState)(r.state))
            return { adopt: false, meta, reason: 'EXITED' };
        if (r.deadline.getTime() <= this.d.clock.now().getTime())
            return { adopt: false, meta, reason: 'LIFETIME_EXPIRED' };
        return { adopt: true, meta };
    }
    adopt(r, meta) {
        const now = this.d.clock.now();
        const rec = {
            sandboxId: r.sandboxId,
            organizationId: meta.organizationId,
            spec: meta.spec,
            labels: meta.labels,
            effective: meta.effective,
            requestFingerprint: meta.requestFingerprint,
            state: r.state,
            createTime: new Date(meta.createTime),
            ...(r.state === 'STATE_RUNNING' || r.state === 'STATE_TERMINATING' ? { startTime: r.startedAt } : {}),
            sequence: (0, sandbox_record_1.nextSequence)(0, now),
            allocation: { cpuMillis: meta.cpuMillis, memoryBytes: meta.memoryBytes },
            deadline: r.deadline,
        };
        this.records.set(rec.sandboxId, rec);
        this.armLifetime(rec);
        // Re-announce the current state: a gateway that missed events while the runner was down
        // converges on it (the clock-derived sequence is newer than anything sent before).
        this.emit(rec);
    }
    recordReaped(r, meta, reason) {
        const now = this.d.clock.now();
        const rec = {
            sandboxId: r.sandboxId,
            organizationId: meta?.organizationId ?? this.d.identity.organizationId,
            spec: meta?.spec ?? { containers: [{ name: 'main' }] },
            labels: meta?.labels ?? {},
            effective: meta?.effective ?? {},
            requestFingerprint: meta?.requestFingerprint ?? '',
            state: reason === 'EXITED' && r.state === 'STATE_COMPLETED' ? 'STATE_COMPLETED' : 'STATE_FAILED',
            stateReason: reason,
            message: `found at runner startup and reaped (${reason})`,
            createTime: meta ? new Date(meta.createTime) : r.startedAt,
            startTime: r.startedAt,
            endTime: now,
            sequence: (0, sandbox_record_1.nextSequence)(0, now),
            allocation: { cpuMillis: 0, memoryBytes: 0 },
            deadline: r.deadline,
        };
        this.records.set(rec.sandboxId, rec);
        this.emit(rec);
    }
    // -------------------------------------------------------------------------------------------
    // capacity and heartbeat figures
    // -------------------------------------------------------------------------------------------
    capacity() {
        let cpu = 0;
        let mem = 0;
        let running = 0;
        for (const rec of this.records.values()) {
            if (!(0, sandbox_record_1.holdsCapacity)(rec))
                continue;
            cpu += rec.allocation.cpuMillis;
            mem += rec.allocation.memoryBytes;
            running++;
        }
        return {
            cpuMillisFree: Math.max(0, this.d.capacity.cpuMillis - cpu),
            memoryBytesFree: Math.max(0, this.d.capacity.memoryBytes - mem),
            sandboxesRunning: running,
            sandboxesMax: this.d.capacity.sandboxes,
        };
    }
    checkCapacity(want) {
        const free = this.capacity();
        if (free.sandboxesRunning >= free.sandboxesMax)
            throw errors_1.runnerErrors.atCapacity(`${free.sandboxesRunning}/${free.sandboxesMax} sandboxes`);
        if (want.cpuMillis > free.cpuMillisFree)
            throw errors_1.runnerErrors.atCapacity(`${want.cpuMillis}m CPU wanted, ${free.cpuMillisFree}m free`);
        if (want.memoryBytes > free.memoryBytesFree) {
            throw errors_1.runnerErrors.atCapacity(`${want.memoryBytes} bytes of memory wanted, ${free.memoryBytesFree} free`);
        }
    }
    /** Clears timers. Sandboxes keep running: the next runner process adopts them. */
    close() {
        for (const t of this.lifetimeTimers.values())
            clearTimeout(t);
        this.lifetimeTimers.clear();
    }
    // -------------------------------------------------------------------------------------------
    // internals
    // -------------------------------------------------------------------------------------------
    onBackendEvent(e) {
        if (!this.records.has(e.sandboxId)) {
            // A sandbox the runner does not know (already reaped, or launched by a previous process
            // and not yet recovered): its fate is settled by recover(), not by a stray event.
            return;
        }
        this.transition(e.sandboxId, {
            state: e.state,
            ...(e.reason !== undefined ? { reason: e.reason } : {}),
            ...(e.message !== undefined ? { message: e.message } : {}),
            ...(e.exitCode !== undefined ? { exitCode: e.exitCode } : {}),
            at: e.at,
        });
    }
    transition(sandboxId, change) {
        const rec = this.records.get(sandboxId);
        if (!rec)
            return;
        const next = (0, sandbox_record_1.applyStateChange)(rec, change);
        if (!next)
            return;
        this.records.set(sandboxId, next);
        if ((0, contracts_1.isTerminalSandboxState)(next.state))
            this.disarmLifetime(sandboxId);
        this.emit(next);
    }
    stop(sandboxId, graceSeconds, reason) {
        this.transition(sandboxId, { state: 'STATE_TERMINATING', reason, at: this.d.clock.now() });
        this.d.backend.stop(sandboxId, graceSeconds, reason).catch((e) => {
            this.d.log.error('Failed to stop sandbox', { sandboxId, reason, error: String(e) });
            this.transition(sandboxId, { state: 'STATE_FAILED', reason, message: `stop failed: ${String(e)}`, at: this.d.clock.now() });
        });
    }
    /** The runner's own lifetime timer, in addition to the backend's backstop. */
    armLifetime(rec) {
        this.disarmLifetime(rec.sandboxId);
        const ms = Math.max(0, rec.deadline.getTime() - this.d.clock.now().getTime());
        // setTimeout caps at 2^31-1 ms (~24.8 days); a longer lifetime re-arms when the timer fires.
        const t = setTimeout(() => {
            const cur = this.records.get(rec.sandboxId);
            if (!cur || (0, contracts_1.isTerminalSandboxState)(cur.state))
                return;
            if (cur.deadline.getTime() > this.d.clock.now().getTime())
                return this.armLifetime(cur);
            this.stop(rec.sandboxId, 0, 'LIFETIME_EXPIRED');
        }, Math.min(ms, 2 ** 31 - 1));
        t.unref();
        this.lifetimeTimers.set(rec.sandboxId, t);
    }
    disarmLifetime(sandboxId) {
        const t = this.lifetimeTimers.get(sandboxId);
        if (t)
            clearTimeout(t);
        this.lifetimeTimers.delete(sandboxId);
    }
    emit(rec) {
        this.d.publishState({
            sandboxId: rec.sandboxId,
            organizationId: rec.organizationId,
            runnerId: this.d.identity.runnerId,
            state: rec.state,
            ...(rec.stateReason !== undefined ? { reason: rec.stateReason } : {}),
            ...(rec.message !== undefined ? { message: rec.message } : {}),
            ...(rec.exitCode !== undefined ? { exitCode: rec.exitCode } : {}),
            at: this.d.clock.now().toISOString(),
            sequence: rec.sequence,
        });
    }
    mustGet(sandboxId) {
        const rec = this.records.get(sandboxId);
        if (!rec)
            throw errors_1.runnerErrors.sandboxNotFound(sandboxId);
        return rec;
    }
    view(rec) {
        return (0, sandbox_record_1.toSandbox)(rec, this.d.identity);
    }
}
exports.SandboxService = SandboxService;
function readMeta(labels) {
    const raw = labels[launch_spec_1.SANDBOX_META_LABEL];
    if (!raw)
        return undefined;
    try {
        const r = launch_spec_1.PersistedSandboxMetaSchema.safeParse(JSON.parse(raw));
        return r.success ? r.data : undefined;
    }
    catch {
        return undefined;
    }
}
//# sourceMappingURL=sandbox-service.js.map