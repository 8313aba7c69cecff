/** An image the local backend can run: a host directory used as a read-only root filesystem. */
export interface LocalImage {
    /** Absolute path of a root filesystem (like an unpacked container image). */
    rootfs: string;
}
export interface LocalBackendOptions {
    runnerId: string;
    /** Runtime state (one directory per sandbox). Default `/run/paddock/<runnerId>`. Must be on a filesystem that survives a runner restart. */
    stateDir?: string;
    /** Root of the cgroup filesystem. Default `/sys/fs/cgroup`. */
    cgroupRoot?: string;
    /** Extra images, name → root filesystem. `paddock/base` (the host's /usr and /etc essentials) is always known. */
    images?: Record<string, LocalImage>;
    bwrapPath?: string;
    /** Python 3 for the per-sandbox supervisors. Default `/usr/bin/python3`. */
    pythonPath?: string;
    /** Host uid/gid the sandboxed processes run as (inside a user namespace). Default 65534 (nobody). */
    sandboxUid?: number;
    sandboxGid?: number;
    /** Cap on each sandbox's captured stdout+stderr. Default 10 MiB. */
    logCapBytes?: number;
    /** Pre-started supervisors kept ready, which takes their start-up off the launch path. Default 2; 0 disables. */
    poolSize?: number;
    /** Grace between SIGTERM and SIGKILL when the lifetime expires. Default 2000 ms. */
    lifetimeGraceMs?: number;
}
export interface ResolvedOptions {
    runnerId: string;
    stateDir: string;
    cgroupRoot: string;
    images: Record<string, LocalImage>;
    bwrapPath: string;
    pythonPath: string;
    sandboxUid: number;
    sandboxGid: number;
    logCapBytes: number;
    poolSize: number;
    lifetimeGraceMs: number;
}
export declare const BASE_IMAGE = "paddock/base";
export declare const DEFAULT_LOG_CAP_BYTES: number;
/** Ids become directory and cgroup names, so they are restricted to a safe alphabet. */
export declare function isSafeId(id: string): boolean;
export declare function resolveOptions(o: LocalBackendOptions): ResolvedOptions;
