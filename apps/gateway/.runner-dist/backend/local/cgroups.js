"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.RunnerCgroups = exports.SUPERVISORS_GROUP = exports.V1_CONTROLLERS = void 0;
exports.detectCgroupMode = detectCgroupMode;
exports.readPids = readPids;
exports.killQuietly = killQuietly;
const node_fs_1 = require("node:fs");
const node_path_1 = require("node:path");
exports.V1_CONTROLLERS = ['pids', 'memory', 'cpu'];
exports.SUPERVISORS_GROUP = '_supervisors';
/** Detects the layout: pure v2 when the root itself is a cgroup2 mount, v1 when the controllers are mounted. */
function detectCgroupMode(root) {
    if ((0, node_fs_1.existsSync)((0, node_path_1.join)(root, 'cgroup.controllers')))
        return 'v2';
    if (exports.V1_CONTROLLERS.every((c) => (0, node_fs_1.existsSync)((0, node_path_1.join)(root, c, 'cgroup.procs'))))
        return 'v1';
    return undefined;
}
function readPids(procsFile) {
    try {
        return (0, node_fs_1.readFileSync)(procsFile, 'utf8')
            .split('\n')
            .filter((l) => l.length > 0)
            .map(Number);
    }
    catch {
        return [];
    }
}
function writeIfExists(file, value) {
    if ((0, node_fs_1.existsSync)(file))
        (0, node_fs_1.writeFileSync)(file, value);
}
class RunnerCgroups {
    constructor(mode, root, runnerId) {
        this.mode = mode;
        this.root = root;
        this.runnerId = runnerId;
    }
    /** The runner-level directories, one per hierarchy. */
    runnerDirs() {
        return this.mode === 'v1'
            ? exports.V1_CONTROLLERS.map((c) => (0, node_path_1.join)(this.root, c, 'paddock', this.runnerId))
            : [(0, node_path_1.join)(this.root, 'paddock', this.runnerId)];
    }
    /** The sandbox's directories; the first one's `cgroup.procs` lists every process of the sandbox. */
    boxDirs(sandboxId) {
        return this.runnerDirs().map((d) => (0, node_path_1.join)(d, sandboxId));
    }
    supervisorsDir() {
        return (0, node_path_1.join)(this.runnerDirs()[0], exports.SUPERVISORS_GROUP);
    }
    oomFile(sandboxId) {
        const memDir = this.mode === 'v1' ? this.boxDirs(sandboxId)[1] : this.boxDirs(sandboxId)[0];
        return (0, node_path_1.join)(memDir, this.mode === 'v1' ? 'memory.oom_control' : 'memory.events');
    }
    killFile(sandboxId) {
        return this.mode === 'v2' ? (0, node_path_1.join)(this.boxDirs(sandboxId)[0], 'cgroup.kill') : undefined;
    }
    procsFiles(sandboxId) {
        return this.boxDirs(sandboxId).map((d) => (0, node_path_1.join)(d, 'cgroup.procs'));
    }
    /** Creates the runner-level tree (and on v2 delegates cpu, memory and pids down to it). */
    ensureRunnerTree() {
        for (const d of this.runnerDirs())
            (0, node_fs_1.mkdirSync)(d, { recursive: true });
        if (this.mode === 'v2') {
            for (const d of [this.root, (0, node_path_1.join)(this.root, 'paddock'), (0, node_path_1.join)(this.root, 'paddock', this.runnerId)]) {
                writeIfExists((0, node_path_1.join)(d, 'cgroup.subtree_control'), '+cpu +memory +pids');
            }
        }
        (0, node_fs_1.mkdirSync)(this.supervisorsDir(), { recursive: true });
    }
    /** Creates the sandbox's cgroups with every limit set, before any process joins them. */
    create(sandboxId, limits) {
        const quotaUs = Math.max(1000, Math.round(limits.cpuMillis * 100));
        if (this.mode === 'v1') {
            const [pids, memory, cpu] = this.boxDirs(sandboxId);
            for (const d of [pids, memory, cpu])
                (0, node_fs_1.mkdirSync)(d, { recursive: true });
            (0, node_fs_1.writeFileSync)((0, node_path_1.join)(pids, 'pids.max'), String(limits.pidsMax));
            (0, node_fs_1.writeFileSync)((0, node_path_1.join)(memory, 'memory.limit_in_bytes'), String(limits.memoryBytes));
            // No swap: memsw (memory+swap) equal to the memory limit, where the kernel accounts swap.
            writeIfExists((0, node_path_1.join)(memory, 'memory.memsw.limit_in_bytes'), String(limits.memoryBytes));
            (0, node_fs_1.writeFileSync)((0, node_path_1.join)(cpu, 'cpu.cfs_period_us'), '100000');
            (0, node_fs_1.writeFileSync)((0, node_path_1.join)(cpu, 'cpu.cfs_quota_us'), String(quotaUs));
        }
        else {
            const [dir] = this.boxDirs(sandboxId);
            (0, node_fs_1.mkdirSync)(dir, { recursive: true });
            (0, node_fs_1.writeFileSync)((0, node_path_1.join)(dir, 'pids.max'), String(limits.pidsMax));
            (0, node_fs_1.writeFileSync)((0, node_path_1.join)(dir, 'memory.max'), String(limits.memoryBytes));
            writeIfExists((0, node_path_1.join)(dir, 'memory.swap.max'), '0');
            (0, node_fs_1.writeFileSync)((0, node_path_1.join)(dir, 'cpu.max'), `${quotaUs} 100000`);
        }
    }
    pids(sandboxId) {
        return readPids(this.procsFiles(sandboxId)[0]);
    }
    /** SIGKILLs every process until the cgroup is empty, then removes it. Returns false if it stayed busy. */
    async killAndRemove(sandboxId, timeoutMs = 10_000) {
        const deadline = Date.now() + timeoutMs;
        const killFile = this.killFile(sandboxId);
        for (;;) {
            const pids = this.boxDirs(sandboxId).flatMap((d) => readPids((0, node_path_1.join)(d, 'cgroup.procs')));
            if (pids.length === 0)
                break;
            if (killFile && (0, node_fs_1.existsSync)(killFile))
                (0, node_fs_1.writeFileSync)(killFile, '1');
            for (const pid of pids)
                killQuietly(pid, 'SIGKILL');
            if (Date.now() > deadline)
                return false;
            await new Promise((r) => setTimeout(r, 2));
        }
        for (const d of this.boxDirs(sandboxId)) {
            for (;;) {
                try {
                    (0, node_fs_1.rmdirSync)(d);
                    break;
                }
                catch (e) {
                    const code = e.code;
                    if (code === 'ENOENT')
                        break;
                    if (code !== 'EBUSY' || Date.now() > deadline)
                        return false;
                    await new Promise((r) => setTimeout(r, 5));
                }
            }
        }
        return true;
    }
    /** Sandbox ids that have a cgroup under this runner (any hierarchy). */
    listSandboxes() {
        const ids = new Set();
        for (const d of this.runnerDirs()) {
            if (!(0, node_fs_1.existsSync)(d))
                continue;
            for (const e of (0, node_fs_1.readdirSync)(d, { withFileTypes: true })) {
                if (e.isDirectory() && e.name !== exports.SUPERVISORS_GROUP)
                    ids.add(e.name);
            }
        }
        return [...ids];
    }
    supervisorPids() {
        return readPids((0, node_path_1.join)(this.supervisorsDir(), 'cgroup.procs'));
    }
    /** Removes the runner-level tree once it is empty (tests and decommissioning). */
    removeRunnerTree() {
        for (const d of this.runnerDirs()) {
            for (const sub of [(0, node_path_1.join)(d, exports.SUPERVISORS_GROUP), d]) {
                try {
                    (0, node_fs_1.rmdirSync)(sub);
                }
                catch {
                    // busy or already gone: the caller checks emptiness separately
                }
            }
        }
    }
}
exports.RunnerCgroups = RunnerCgroups;
function killQuietly(pid, signal) {
    try {
        process.kill(pid, signal);
    }
    catch {
        // already gone
    }
}
//# sourceMappingURL=cgroups.js.map