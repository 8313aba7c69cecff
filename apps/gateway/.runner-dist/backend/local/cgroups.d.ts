/**
 * Per-runner cgroup tree: `<root>/<ctrl>/paddock/<runnerId>/<sandboxId>` on cgroup v1 (cpu,
 * memory, pids) or `<root>/paddock/<runnerId>/<sandboxId>` on a pure cgroup v2 host. Supervisors
 * live in a `_supervisors` sibling (pids controller only on v1) so that everything the backend
 * ever starts can be found, and killed, by walking this tree.
 */
export type CgroupMode = 'v1' | 'v2';
export declare const V1_CONTROLLERS: readonly ['pids', 'memory', 'cpu'];
export declare const SUPERVISORS_GROUP = "_supervisors";
export interface CgroupLimits {
    cpuMillis: number;
    memoryBytes: number;
    pidsMax: number;
}
/** Detects the layout: pure v2 when the root itself is a cgroup2 mount, v1 when the controllers are mounted. */
export declare function detectCgroupMode(root: string): CgroupMode | undefined;
export declare function readPids(procsFile: string): number[];
export declare class RunnerCgroups {
    readonly mode: CgroupMode;
    readonly root: string;
    readonly runnerId: string;
    constructor(mode: CgroupMode, root: string, runnerId: string);
    /** The runner-level directories, one per hierarchy. */
    runnerDirs(): string[];
    /** The sandbox's directories; the first one's `cgroup.procs` lists every process of the sandbox. */
    boxDirs(sandboxId: string): string[];
    supervisorsDir(): string;
    oomFile(sandboxId: string): string;
    killFile(sandboxId: string): string | undefined;
    procsFiles(sandboxId: string): string[];
    /** Creates the runner-level tree (and on v2 delegates cpu, memory and pids down to it). */
    ensureRunnerTree(): void;
    /** Creates the sandbox's cgroups with every limit set, before any process joins them. */
    create(sandboxId: string, limits: CgroupLimits): void;
    pids(sandboxId: string): number[];
    /** SIGKILLs every process until the cgroup is empty, then removes it. Returns false if it stayed busy. */
    killAndRemove(sandboxId: string, timeoutMs?: number): Promise<boolean>;
    /** Sandbox ids that have a cgroup under this runner (any hierarchy). */
    listSandboxes(): string[];
    supervisorPids(): number[];
    /** Removes the runner-level tree once it is empty (tests and decommissioning). */
    removeRunnerTree(): void;
}
export declare function killQuietly(pid: number, signal: NodeJS.Signals): void;
