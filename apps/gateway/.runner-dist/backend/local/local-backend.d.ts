import type { Readable } from 'node:stream';
import { type RunnerCapabilities, type SandboxStateReason } from '@paddock/contracts';
import type { BackendEvent, ExecProcess, ExecRequest, ExecResult, ExecStreamRequest, FileStat, LaunchSpec, LogChunk, LogRequest, RecoveredSandbox, SandboxBackend } from '../sandbox-backend';
import { RunnerCgroups } from './cgroups';
import { type LocalBackendOptions } from './options';
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
export declare class LocalBackend implements SandboxBackend {
    readonly kind: 'local';
    private readonly o;
    private readonly sandboxes;
    private readonly listeners;
    private cgroups?;
    private pool?;
    private closed;
    constructor(options: LocalBackendOptions);
    get stateDir(): string;
    /** Lazily prepares the state directory, the cgroup tree and the supervisor pool. */
    private init;
    private scriptPath;
    private sandboxDir;
    capabilities(): RunnerCapabilities;
    onEvent(listener: (e: BackendEvent) => void): void;
    private publish;
    private newRecord;
    /** Appends an event the runner itself decides (CREATING, IMAGE_NOT_FOUND...) to the sandbox's event file. */
    private recordEvent;
    private apply;
    /** Reads the sandbox's event file from where we left off (the supervisor appends to it). */
    private catchUp;
    launch(spec: LaunchSpec): Promise<void>;
    /** Follows a supervisor we started: its stdout carries one JSON event per line; EOF means it exited. */
    private attachSupervisor;
    /** The supervisor exited: read its last events; if it died without a terminal event, clean up after it. */
    private onSupervisorGone;
    /**
     * The runner-side lifetime enforcement (the supervisor's own deadline is the primary one): if the
     * sandbox is still not terminal well past its deadline, the runner kills it itself.
     */
    private armBackstop;
    private record;
    private runningRecord;
    private socketPath;
    stop(sandboxId: string, graceSeconds: number, reason: SandboxStateReason): Promise<void>;
    exec(sandboxId: string, req: ExecRequest): Promise<ExecResult>;
    execStream(sandboxId: string, req: ExecStreamRequest): Promise<ExecProcess>;
    private readPlanEnv;
    private files;
    readFile(sandboxId: string, path: string): Promise<Readable>;
    writeFile(sandboxId: string, path: string, content: Readable | Buffer, mode?: number): Promise<void>;
    listDir(sandboxId: string, path: string): Promise<FileStat[]>;
    stat(sandboxId: string, path: string): Promise<FileStat>;
    remove(sandboxId: string, path: string, recursive: boolean): Promise<void>;
    logs(sandboxId: string, req: LogRequest): AsyncIterable<LogChunk>;
    /** Lists live sandboxes to adopt; reaps dead ones and anything without state. */
    recover(): Promise<RecoveredSandbox[]>;
    private toRecovered;
    /** Follows an adopted sandbox by polling its event file and its supervisor's liveness. */
    private adopt;
    reap(sandboxId: string, reason: SandboxStateReason): Promise<void>;
    /** Kills the supervisor and every process of the sandbox, removes its cgroups, tmpfs and state. */
    private cleanupResources;
    close(): Promise<void>;
    /** Test and operator helper: the cgroup tree of this runner (e.g. to check that nothing is left). */
    cgroupTree(): RunnerCgroups;
}
/** `/workspace/a/b` → `workspace/a/b` under the sandbox's disk; anything else is refused. */
export declare function sandboxFileToDiskPath(path: string): string | undefined;
