"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.LocalBackend = void 0;
exports.sandboxFileToDiskPath = sandboxFileToDiskPath;
const node_child_process_1 = require("node:child_process");
const node_fs_1 = require("node:fs");
const node_path_1 = require("node:path");
const contracts_1 = require("@paddock/contracts");
const bwrap_args_1 = require("./bwrap-args");
const cgroups_1 = require("./cgroups");
const errors_1 = require("./errors");
const exec_client_1 = require("./exec-client");
const file_client_1 = require("./file-client");
const log_file_1 = require("./log-file");
const options_1 = require("./options");
const socket_io_1 = require("./socket-io");
const supervisor_pool_1 = require("./supervisor-pool");
const supervisor_py_1 = require("./supervisor.py");
const DEFAULT_LIFETIME_SECONDS = 600;
function archName() {
    return process.arch === 'x64' ? 'amd64' : process.arch === 'arm64' ? 'arm64' : process.arch;
}
/**
 * Runs sandboxes on this machine with bubblewrap and cgroups.
 *
 * **Isolation level:** Linux namespaces (user, pid, mount, ipc, uts, network, cgroup), cgroup
 * limits, no capabilities, no new privileges and a seccomp deny-list. That is a shared kernel:
 * this backend is for development and single-machine use. Production isolation comes from the
 * Kubernetes backend's runtime classes (gVisor, Kata).
 *
 * Each sandbox has a detached supervisor process (its parent) that enforces the lifetime, captures
 * output and serves exec/file requests, so sandboxes survive a runner restart and are adopted by
 * `recover()`, while nothing outlives its lifetime.
 */
class LocalBackend {
    constructor(options) {
        this.kind = 'local';
        this.sandboxes = new Map();
        this.listeners = [];
        this.closed = false;
        if (!(0, options_1.isSafeId)(options.runnerId)) {
            throw new contracts_1.PaddockError('invalid_argument', `runnerId ${JSON.stringify(options.runnerId)} must match [A-Za-z0-9][A-Za-z0-9._-]{0,127}`, {
                reason: 'PADDOCK_VALIDATION_FAILED',
                violations: [{ field: 'runnerId', rule: 'pattern', description: 'letters, digits, dot, underscore, dash; at most 128' }],
            });
        }
        this.o = (0, options_1.resolveOptions)(options);
    }
    get stateDir() {
        return this.o.stateDir;
    }
    /** Lazily prepares the state directory, the cgroup tree and the supervisor pool. */
    init() {
        if (this.cgroups)
            return this.cgroups;
        const mode = (0, cgroups_1.detectCgroupMode)(this.o.cgroupRoot);
        if (!mode) {
            throw new contracts_1.PaddockError('failed_precondition', `no usable cgroup hierarchy under ${this.o.cgroupRoot} (need cgroup v2, or v1 cpu, memory and pids)`, {
                reason: 'CWSANDBOX_INTERNAL',
            });
        }
        // 0711: the sandbox user must traverse to its bind sources, but cannot list other sandboxes.
        (0, node_fs_1.mkdirSync)((0, node_path_1.join)(this.o.stateDir, 'sandboxes'), { recursive: true, mode: 0o711 });
        (0, node_fs_1.writeFileSync)(this.scriptPath(), supervisor_py_1.SUPERVISOR_PY, { mode: 0o644 });
        const cg = new cgroups_1.RunnerCgroups(mode, this.o.cgroupRoot, this.o.runnerId);
        cg.ensureRunnerTree();
        this.cgroups = cg;
        this.pool = new supervisor_pool_1.SupervisorPool(this.o.pythonPath, this.scriptPath(), (0, node_path_1.join)(cg.supervisorsDir(), 'cgroup.procs'), (0, node_path_1.join)(this.o.stateDir, 'supervisors.log'), this.o.poolSize);
        this.pool.scheduleRefill();
        return cg;
    }
    scriptPath() {
        return (0, node_path_1.join)(this.o.stateDir, 'supervisor.py');
    }
    sandboxDir(id) {
        return (0, node_path_1.join)(this.o.stateDir, 'sandboxes', id);
    }
    capabilities() {
        return {
            isolation: 'namespaces',
            egressRuleKinds: [],
            ingressRuleKinds: [],
            // "Egress" here means sharing the host network (network: 'host'); no rule kind can be enforced.
            supportsEgress: true,
            runtimeClasses: [],
            gpuTypes: [],
            architectures: [archName()],
            instanceTypes: [],
            storageMedia: ['STORAGE_MEDIUM_DISK'],
            supportsPrivileged: false,
            images: [options_1.BASE_IMAGE, ...Object.keys(this.o.images)],
        };
    }
    onEvent(listener) {
        this.listeners.push(listener);
    }
    publish(e) {
        for (const l of this.listeners) {
            try {
                l(e);
            }
            catch {
                // a listener's failure must not break event delivery to the others
            }
        }
    }
    newRecord(id, labels, startedAt, deadline) {
        let resolveTerminal;
        const terminal = new Promise((r) => (resolveTerminal = r));
        const rec = {
            id,
            dir: this.sandboxDir(id),
            labels,
            state: 'STATE_PENDING',
            startedAt,
            deadline,
            lastSeq: 0,
            eventsPos: 0,
            terminal,
            resolveTerminal,
        };
        this.sandboxes.set(id, rec);
        return rec;
    }
    /** Appends an event the runner itself decides (CREATING, IMAGE_NOT_FOUND...) to the sandbox's event file. */
    recordEvent(rec, ev) {
        const wire = { seq: rec.lastSeq + 1, at: Date.now() / 1000, ...ev };
        try {
            (0, node_fs_1.appendFileSync)((0, node_path_1.join)(rec.dir, 'events.jsonl'), `${JSON.stringify(wire)}\n`);
        }
        catch {
            // the directory may already be gone (reaped); the in-memory event still goes out
        }
        this.apply(rec, wire);
    }
    apply(rec, ev) {
        if (ev.seq <= rec.lastSeq || (0, contracts_1.isTerminalSandboxState)(rec.state))
            return;
        rec.lastSeq = ev.seq;
        rec.state = ev.state;
        const out = { sandboxId: rec.id, state: ev.state, at: new Date(ev.at * 1000) };
        if (ev.reason)
            out.reason = ev.reason;
        if (ev.message)
            out.message = ev.message;
        if (ev.exitCode !== undefined && ev.exitCode !== null)
            out.exitCode = ev.exitCode;
        this.publish(out);
        if ((0, contracts_1.isTerminalSandboxState)(ev.state)) {
            if (rec.poll)
                clearInterval(rec.poll);
            if (rec.backstop)
                clearTimeout(rec.backstop);
            rec.resolveTerminal();
        }
    }
    /** Reads the sandbox's event file from where we left off (the supervisor appends to it). */
    catchUp(rec) {
        let text;
        try {
            text = (0, node_fs_1.readFileSync)((0, node_path_1.join)(rec.dir, 'events.jsonl'), 'utf8');
        }
        catch {
            return;
        }
        for (const line of text.split('\n')) {
            if (!line)
                continue;
            try {
                this.apply(rec, JSON.parse(line));
            }
            catch {
                // a torn last line is read again next time
            }
        }
    }
    async launch(spec) {
        if (this.closed)
            throw new contracts_1.PaddockError('unavailable', 'the local backend is closed', { reason: 'CWSANDBOX_RUNNER_UNAVAILABLE' });
        if (!(0, options_1.isSafeId)(spec.sandboxId)) {
            throw new contracts_1.PaddockError('invalid_argument', `sandboxId ${JSON.stringify(spec.sandboxId)} must match [A-Za-z0-9][A-Za-z0-9._-]{0,127}`, {
                reason: 'CWSANDBOX_INVALID_REQUEST',
                violations: [{ field: 'sandboxId', rule: 'pattern', description: 'letters, digits, dot, underscore, dash; at most 128' }],
            });
        }
        if (this.sandboxes.has(spec.sandboxId) || (0, node_fs_1.existsSync)(this.sandboxDir(spec.sandboxId)))
            return;
        const cg = this.init();
        const lifetime = spec.lifetimeSeconds > 0 ? spec.lifetimeSeconds : DEFAULT_LIFETIME_SECONDS;
        const startedAt = new Date();
        const deadline = new Date(startedAt.getTime() + lifetime * 1000);
        const rec = this.newRecord(spec.sandboxId, spec.labels, startedAt, deadline);
        (0, node_fs_1.mkdirSync)(rec.dir, { recursive: true, mode: 0o711 });
        (0, node_fs_1.writeFileSync)((0, node_path_1.join)(rec.dir, 'meta.json'), JSON.stringify({ sandboxId: spec.sandboxId, labels: spec.labels, startedAt: startedAt.toISOString(), deadline: deadline.toISOString() }));
        this.recordEvent(rec, { state: 'STATE_CREATING' });
        const image = (0, bwrap_args_1.resolveImage)(spec.image, this.o.images);
        if (!image) {
            this.recordEvent(rec, {
                state: 'STATE_FAILED',
                reason: 'IMAGE_NOT_FOUND',
                message: `image ${JSON.stringify(spec.image)} is not known to local runner ${this.o.runnerId} (known: ${this.capabilities().images.join(', ')})`,
            });
            return;
        }
        const files = [];
        for (const f of spec.files) {
            const rel = sandboxFileToDiskPath(f.path);
            if (!rel) {
                this.recordEvent(rec, {
                    state: 'STATE_FAILED',
                    reason: 'FAILED_TO_START',
                    message: `files[].path ${JSON.stringify(f.path)} must be an absolute path under /workspace or /tmp`,
                });
                return;
            }
            files.push({ rel, b64: f.content.toString('base64') });
        }
        try {
            cg.create(spec.sandboxId, spec);
            const plan = {
                sandboxId: spec.sandboxId,
                dir: rec.dir,
                uid: this.o.sandboxUid,
                gid: this.o.sandboxGid,
                bwrapExe: this.o.bwrapPath,
                bwrap: (0, bwrap_args_1.bwrapArgs)(spec, image, (0, node_path_1.join)(rec.dir, 'disk')),
                execEnv: (0, bwrap_args_1.baseEnv)(spec),
                execCwd: spec.workingDir || bwrap_args_1.WORKSPACE,
                cgroupProcs: cg.procsFiles(spec.sandboxId),
                cgroupDirs: cg.boxDirs(spec.sandboxId),
                ...(cg.killFile(spec.sandboxId) ? { cgroupKill: cg.killFile(spec.sandboxId) } : {}),
                oomFile: cg.oomFile(spec.sandboxId),
                nofile: spec.openFilesMax,
                deadlineMs: deadline.getTime(),
                lifetimeSeconds: lifetime,
                memoryBytes: spec.memoryBytes,
                termGraceMs: this.o.lifetimeGraceMs,
                diskBytes: spec.diskBytes,
                logCapBytes: this.o.logCapBytes,
                files,
            };
            const planPath = (0, node_path_1.join)(rec.dir, 'plan.json');
            (0, node_fs_1.writeFileSync)(planPath, JSON.stringify(plan), { mode: 0o600 });
            const sup = this.pool.take();
            this.attachSupervisor(rec, sup);
            sup.stdin?.end(`${planPath}\n`);
        }
        catch (e) {
            this.recordEvent(rec, { state: 'STATE_FAILED', reason: 'FAILED_TO_START', message: `launch failed: ${e.message}` });
            await cg.killAndRemove(spec.sandboxId);
            return;
        }
        this.armBackstop(rec);
    }
    /** Follows a supervisor we started: its stdout carries one JSON event per line; EOF means it exited. */
    attachSupervisor(rec, sup) {
        rec.supervisor = sup;
        rec.supervisorPid = sup.pid;
        let buf = '';
        sup.stdout?.setEncoding('utf8');
        sup.stdout?.on('data', (chunk) => {
            buf += chunk;
            let nl;
            while ((nl = buf.indexOf('\n')) >= 0) {
                const line = buf.slice(0, nl);
                buf = buf.slice(nl + 1);
                try {
                    this.apply(rec, JSON.parse(line));
                }
                catch {
                    // ignore a malformed line: the event file is the record of truth
                }
            }
        });
        sup.stdout?.on('close', () => void this.onSupervisorGone(rec));
        sup.stdout?.on('error', () => undefined);
        sup.stdin?.on('error', () => undefined);
        sup.stdout?.unref?.();
    }
    /** The supervisor exited: read its last events; if it died without a terminal event, clean up after it. */
    async onSupervisorGone(rec) {
        this.catchUp(rec);
        if ((0, contracts_1.isTerminalSandboxState)(rec.state) || this.closed)
            return;
        if (rec.supervisorPid !== undefined && pidAlive(rec.supervisorPid))
            return;
        await this.cleanupResources(rec.id);
        this.recordEvent(rec, { state: 'STATE_FAILED', reason: 'RUNNER_LOST', message: 'the sandbox supervisor exited unexpectedly' });
    }
    /**
     * The runner-side lifetime enforcement (the supervisor's own deadline is the primary one): if the
     * sandbox is still not terminal well past its deadline, the runner kills it itself.
     */
    armBackstop(rec) {
        const due = rec.deadline.getTime() + this.o.lifetimeGraceMs + 3000 - Date.now();
        rec.backstop = setTimeout(() => {
            if (!(0, contracts_1.isTerminalSandboxState)(rec.state))
                void this.reap(rec.id, 'LIFETIME_EXPIRED').catch(() => undefined);
        }, Math.max(0, Math.min(due, 2 ** 31 - 1)));
        rec.backstop.unref();
    }
    record(id) {
        const rec = this.sandboxes.get(id);
        if (!rec)
            throw (0, errors_1.sandboxNotFound)(id);
        return rec;
    }
    runningRecord(id) {
        const rec = this.record(id);
        if (rec.state !== 'STATE_RUNNING')
            throw (0, errors_1.sandboxNotRunning)(id, rec.state);
        return rec;
    }
    socketPath(rec) {
        return (0, node_path_1.join)(rec.dir, 'sup.sock');
    }
    async stop(sandboxId, graceSeconds, reason) {
        const rec = this.record(sandboxId);
        if ((0, contracts_1.isTerminalSandboxState)(rec.state))
            return;
        // Seen by a supervisor that has not opened its socket yet; it then never starts the sandbox.
        if (!(0, node_fs_1.existsSync)((0, node_path_1.join)(rec.dir, 'stop-reason')))
            (0, node_fs_1.writeFileSync)((0, node_path_1.join)(rec.dir, 'stop-reason'), reason);
        try {
            await (0, socket_io_1.request)(this.socketPath(rec), { op: 'stop', grace: Math.max(0, graceSeconds), reason });
        }
        catch (e) {
            const code = e.code;
            const supervisorAlive = rec.supervisorPid !== undefined && pidAlive(rec.supervisorPid);
            if (code !== 'ENOENT' || !supervisorAlive) {
                await this.reap(sandboxId, reason);
                return;
            }
        }
        const limit = (Math.max(0, graceSeconds) + 15) * 1000;
        const timedOut = await Promise.race([rec.terminal.then(() => false), delay(limit).then(() => true)]);
        if (timedOut)
            await this.reap(sandboxId, reason);
    }
    async exec(sandboxId, req) {
        const proc = await this.execStream(sandboxId, { argv: req.argv, ...(req.env ? { env: req.env } : {}), ...(req.cwd ? { cwd: req.cwd } : {}) });
        return (0, exec_client_1.runExec)(proc, req);
    }
    async execStream(sandboxId, req) {
        const rec = this.runningRecord(sandboxId);
        if (req.argv.length === 0) {
            throw new contracts_1.PaddockError('invalid_argument', 'argv must name a command', {
                reason: 'CWSANDBOX_INVALID_REQUEST',
                violations: [{ field: 'argv', rule: 'min_items', description: 'at least one element' }],
            });
        }
        const plan = this.readPlanEnv(rec);
        return (0, exec_client_1.startExec)(this.socketPath(rec), { ...req, env: { ...plan, ...(req.env ?? {}) } }, () => (0, errors_1.sandboxNotRunning)(sandboxId, rec.state));
    }
    readPlanEnv(rec) {
        try {
            return JSON.parse((0, node_fs_1.readFileSync)((0, node_path_1.join)(rec.dir, 'plan.json'), 'utf8')).execEnv;
        }
        catch {
            return {};
        }
    }
    files(id) {
        const rec = this.runningRecord(id);
        return new file_client_1.FileClient(this.socketPath(rec), id);
    }
    async readFile(sandboxId, path) {
        return this.files(sandboxId).read(path);
    }
    async writeFile(sandboxId, path, content, mode) {
        await this.files(sandboxId).write(path, content, mode);
    }
    async listDir(sandboxId, path) {
        return this.files(sandboxId).list(path);
    }
    async stat(sandboxId, path) {
        return this.files(sandboxId).stat(path);
    }
    async remove(sandboxId, path, recursive) {
        return this.files(sandboxId).remove(path, recursive);
    }
    async *logs(sandboxId, req) {
        const rec = this.record(sandboxId);
        const cursor = new log_file_1.LogCursor((0, node_path_1.join)(rec.dir, 'log'));
        let chunks = cursor.readNew();
        if (req.fromOffset !== undefined)
            chunks = (0, log_file_1.fromOffset)(chunks, req.fromOffset);
        if (req.sinceTime) {
            const since = req.sinceTime.getTime();
            chunks = chunks.filter((c) => c.time.getTime() >= since);
        }
        if (req.tailLines !== undefined)
            chunks = (0, log_file_1.tailLines)(chunks, req.tailLines);
        for (const c of chunks) {
            if (req.signal?.aborted)
                return;
            yield c;
        }
        if (!req.follow)
            return;
        for (;;) {
            if (req.signal?.aborted)
                return;
            const done = (0, contracts_1.isTerminalSandboxState)(rec.state);
            for (const c of (0, log_file_1.fromOffset)(cursor.readNew(), req.fromOffset ?? 0)) {
                if (req.signal?.aborted)
                    return;
                yield c;
            }
            if (done)
                return;
            await Promise.race([rec.terminal, delay(50, req.signal)]);
        }
    }
    /** Lists live sandboxes to adopt; reaps dead ones and anything without state. */
    async recover() {
        const cg = this.init();
        const root = (0, node_path_1.join)(this.o.stateDir, 'sandboxes');
        const out = [];
        const alive = new Set();
        for (const id of (0, node_fs_1.readdirSync)(root)) {
            if (this.sandboxes.has(id)) {
                const rec = this.sandboxes.get(id);
                if (!(0, contracts_1.isTerminalSandboxState)(rec.state))
                    out.push(this.toRecovered(rec));
                alive.add(id);
                continue;
            }
            const dir = this.sandboxDir(id);
            let meta;
            try {
                meta = JSON.parse((0, node_fs_1.readFileSync)((0, node_path_1.join)(dir, 'meta.json'), 'utf8'));
            }
            catch {
                await this.cleanupResources(id);
                continue;
            }
            const rec = this.newRecord(id, meta.labels, new Date(meta.startedAt), new Date(meta.deadline));
            this.catchUp(rec);
            const pid = readPid((0, node_path_1.join)(dir, 'supervisor.pid'));
            rec.supervisorPid = pid;
            const supervisorAlive = pid !== undefined && isOurSupervisor(pid, this.scriptPath());
            if (supervisorAlive && !(0, contracts_1.isTerminalSandboxState)(rec.state)) {
                alive.add(id);
                this.adopt(rec);
                out.push(this.toRecovered(rec));
                continue;
            }
            // Dead: its supervisor is gone (or it already ended). Release everything, report why.
            await this.reap(id, 'RUNNER_LOST');
        }
        // Cgroups that have no state directory, and supervisors of the previous runner's pool.
        for (const id of cg.listSandboxes()) {
            if (!alive.has(id) && !this.sandboxes.has(id))
                await cg.killAndRemove(id);
        }
        const ours = new Set([...(this.pool?.pids() ?? []), ...[...this.sandboxes.values()].map((r) => r.supervisorPid ?? -1)]);
        for (const pid of cg.supervisorPids()) {
            if (!ours.has(pid))
                (0, cgroups_1.killQuietly)(pid, 'SIGKILL');
        }
        return out;
    }
    toRecovered(rec) {
        return { sandboxId: rec.id, labels: rec.labels, state: rec.state, startedAt: rec.startedAt, deadline: rec.deadline };
    }
    /** Follows an adopted sandbox by polling its event file and its supervisor's liveness. */
    adopt(rec) {
        rec.poll = setInterval(() => {
            this.catchUp(rec);
            if (!(0, contracts_1.isTerminalSandboxState)(rec.state) && rec.supervisorPid !== undefined && !pidAlive(rec.supervisorPid)) {
                void this.onSupervisorGone(rec);
            }
        }, 100);
        rec.poll.unref();
        this.armBackstop(rec);
    }
    async reap(sandboxId, reason) {
        const rec = this.sandboxes.get(sandboxId);
        if (rec && !(0, contracts_1.isTerminalSandboxState)(rec.state) && rec.supervisorPid !== undefined && pidAlive(rec.supervisorPid)) {
            try {
                if (!(0, node_fs_1.existsSync)((0, node_path_1.join)(rec.dir, 'stop-reason')))
                    (0, node_fs_1.writeFileSync)((0, node_path_1.join)(rec.dir, 'stop-reason'), reason);
                await (0, socket_io_1.request)(this.socketPath(rec), { op: 'stop', grace: 0, reason });
                await Promise.race([rec.terminal, delay(10_000)]);
            }
            catch {
                // the supervisor is not answering: it is killed below
            }
        }
        if (rec) {
            if (rec.poll)
                clearInterval(rec.poll);
            if (rec.backstop)
                clearTimeout(rec.backstop);
            this.catchUp(rec);
            if (!(0, contracts_1.isTerminalSandboxState)(rec.state)) {
                this.recordEvent(rec, { state: 'STATE_FAILED', reason, message: `reaped by the runner (${reason})` });
            }
        }
        await this.cleanupResources(sandboxId);
        this.sandboxes.delete(sandboxId);
    }
    /** Kills the supervisor and every process of the sandbox, removes its cgroups, tmpfs and state. */
    async cleanupResources(id) {
        const cg = this.init();
        const dir = this.sandboxDir(id);
        const pid = readPid((0, node_path_1.join)(dir, 'supervisor.pid'));
        if (pid !== undefined && isOurSupervisor(pid, this.scriptPath())) {
            (0, cgroups_1.killQuietly)(pid, 'SIGKILL');
            const until = Date.now() + 5000;
            while (pidAlive(pid) && Date.now() < until)
                await delay(5);
        }
        await cg.killAndRemove(id);
        const disk = (0, node_path_1.join)(dir, 'disk');
        if (isMountPoint(disk))
            (0, node_child_process_1.spawnSync)('umount', ['-l', disk]);
        (0, node_fs_1.rmSync)(dir, { recursive: true, force: true });
    }
    async close() {
        this.closed = true;
        this.pool?.close();
        for (const rec of this.sandboxes.values()) {
            if (rec.poll)
                clearInterval(rec.poll);
            if (rec.backstop)
                clearTimeout(rec.backstop);
            rec.supervisor?.stdout?.destroy();
        }
    }
    /** Test and operator helper: the cgroup tree of this runner (e.g. to check that nothing is left). */
    cgroupTree() {
        return this.init();
    }
}
exports.LocalBackend = LocalBackend;
/** `/workspace/a/b` → `workspace/a/b` under the sandbox's disk; anything else is refused. */
function sandboxFileToDiskPath(path) {
    if (!path.startsWith('/'))
        return undefined;
    const norm = node_path_1.posix.normalize(path);
    for (const top of ['/workspace/', '/tmp/']) {
        if (norm.startsWith(top) && norm.length > top.length)
            return norm.slice(1);
    }
    return undefined;
}
function readPid(file) {
    try {
        const n = Number((0, node_fs_1.readFileSync)(file, 'utf8').trim());
        return Number.isInteger(n) && n > 0 ? n : undefined;
    }
    catch {
        return undefined;
    }
}
function pidAlive(pid) {
    try {
        const stat = (0, node_fs_1.readFileSync)(`/proc/${pid}/stat`, 'utf8');
        // A zombie has exited; only its parent has not collected it yet.
        return !/^\d+ \(.*\) Z /.test(stat);
    }
    catch {
        return false;
    }
}
function isOurSupervisor(pid, script) {
    try {
        return pidAlive(pid) && (0, node_fs_1.readFileSync)(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes(script);
    }
    catch {
        return false;
    }
}
function isMountPoint(path) {
    try {
        return (0, node_fs_1.readFileSync)('/proc/self/mountinfo', 'utf8')
            .split('\n')
            .some((l) => l.split(' ')[4] === path);
    }
    catch {
        return false;
    }
}
function delay(ms, signal) {
    return new Promise((resolve) => {
        const t = setTimeout(done, ms);
        function done() {
            clearTimeout(t);
            signal?.removeEventListener('abort', done);
            resolve();
        }
        signal?.addEventListener('abort', done, { once: true });
    });
}
//# sourceMappingURL=local-backend.js.map