"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.SupervisorPool = void 0;
const node_child_process_1 = require("node:child_process");
const node_fs_1 = require("node:fs");
/**
 * Pre-started supervisors. A supervisor is a Python process; its start-up (tens of ms on this
 * machine) would otherwise dominate launch → RUNNING. Idle members wait on stdin for a plan path;
 * they exit by themselves when the runner goes away (EOF), so the pool never leaks across restarts.
 */
class SupervisorPool {
    constructor(pythonPath, scriptPath, supervisorsProcs, logPath, size) {
        this.pythonPath = pythonPath;
        this.scriptPath = scriptPath;
        this.supervisorsProcs = supervisorsProcs;
        this.logPath = logPath;
        this.size = size;
        this.idle = [];
        this.refilling = false;
        this.closed = false;
    }
    /** A ready supervisor (or a fresh one when the pool is empty); the caller hands it a plan. */
    take() {
        const child = this.idle.shift() ?? this.spawnOne();
        this.scheduleRefill();
        return child;
    }
    pids() {
        return this.idle.map((c) => c.pid ?? -1);
    }
    scheduleRefill() {
        if (this.refilling || this.closed || this.idle.length >= this.size)
            return;
        this.refilling = true;
        setImmediate(() => {
            this.refilling = false;
            if (this.closed)
                return;
            while (this.idle.length < this.size)
                this.idle.push(this.spawnOne());
        });
    }
    spawnOne() {
        const logFd = (0, node_fs_1.openSync)(this.logPath, 'a');
        try {
            const child = (0, node_child_process_1.spawn)(this.pythonPath, ['-S', '-E', this.scriptPath, 'pool', this.supervisorsProcs], {
                detached: true,
                stdio: ['pipe', 'pipe', logFd],
            });
            child.on('error', () => {
                this.idle = this.idle.filter((c) => c !== child);
            });
            child.unref();
            return child;
        }
        finally {
            (0, node_fs_1.closeSync)(logFd);
        }
    }
    close() {
        this.closed = true;
        for (const c of this.idle) {
            c.stdin?.end();
            c.stdout?.destroy();
        }
        this.idle = [];
    }
}
exports.SupervisorPool = SupervisorPool;
//# sourceMappingURL=supervisor-pool.js.map