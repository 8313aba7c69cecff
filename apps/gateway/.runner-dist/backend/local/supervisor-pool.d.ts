import { type ChildProcess } from 'node:child_process';
/**
 * Pre-started supervisors. A supervisor is a Python process; its start-up (tens of ms on this
 * machine) would otherwise dominate launch → RUNNING. Idle members wait on stdin for a plan path;
 * they exit by themselves when the runner goes away (EOF), so the pool never leaks across restarts.
 */
export declare class SupervisorPool {
    private readonly pythonPath;
    private readonly scriptPath;
    private readonly supervisorsProcs;
    private readonly logPath;
    private readonly size;
    private idle;
    private refilling;
    private closed;
    constructor(pythonPath: string, scriptPath: string, supervisorsProcs: string, logPath: string, size: number);
    /** A ready supervisor (or a fresh one when the pool is empty); the caller hands it a plan. */
    take(): ChildProcess;
    pids(): number[];
    scheduleRefill(): void;
    private spawnOne;
    close(): void;
}
