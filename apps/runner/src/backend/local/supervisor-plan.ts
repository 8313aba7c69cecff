import { z } from 'zod';

const path = z.string().min(1);
const count = z.number().int().nonnegative();

/**
 * The plan the runner writes for each sandbox's supervisor (`<sandbox dir>/plan.json`), one schema
 * for both sides: the runner builds it typed by this, and the supervisor checks every plan against
 * its JSON Schema (`z.toJSONSchema` of this, written beside the supervisor's files when the runner
 * installs them) before it acts on it, so a field renamed on one side fails there, by name. The
 * supervisor's unit tests also check that every key its code reads is declared here.
 */
export const SupervisorPlanSchema = z.strictObject({
  sandboxId: z.string().min(1),
  /** The sandbox's state directory (events, log, sockets, the disk mount). */
  dir: path,
  /** Host uid/gid the sandbox runs as (inside its user namespace). */
  uid: count,
  gid: count,
  /** The uid/gid the sandbox's processes have inside its user namespace (an image's own user); default `uid`/`gid`. */
  innerUid: count.optional(),
  innerGid: count.optional(),
  /** Capabilities the primary keeps (`CAP_NET_BIND_SERVICE`); its execs, probes and file operations keep them too. */
  capAdd: z.array(z.string().min(1)).optional(),
  /** Ports below 1024 may be bound in the sandbox's network namespace (a container keeps NET_BIND_SERVICE). */
  lowPorts: z.boolean().optional(),
  bwrapExe: path,
  /** bwrap's full argv (argv[0] included). */
  bwrap: z.array(z.string()),
  /** The environment of every exec (the runner merges it with the request's). */
  execEnv: z.record(z.string(), z.string()),
  execCwd: path,
  /** The sandbox's `cgroup.procs` files, one per hierarchy; the first lists every process. */
  cgroupProcs: z.array(path).min(1),
  cgroupDirs: z.array(path).min(1),
  /** cgroup v2's `cgroup.kill`, absent on v1. */
  cgroupKill: path.optional(),
  oomFile: path,
  /** The CPU quota written once the workload runs (the launch runs boosted). */
  cpuSteady: z.strictObject({ file: path, value: z.string().min(1) }),
  nofile: z.number().int().positive(),
  /** Unix ms at which the lifetime ends. */
  deadlineMs: count,
  lifetimeSeconds: count,
  memoryBytes: count,
  termGraceMs: count,
  diskBytes: z.number().int().positive(),
  logCapBytes: z.number().int().positive(),
  /** Files placed on the sandbox's disk before it starts: a path relative to the disk, base64 content. */
  files: z.array(z.strictObject({ rel: path, b64: z.string(), mode: count.optional() })),
  /** A file-system snapshot (tar) extracted onto the fresh disk before the files and the start. */
  restoreArchive: path.optional(),
  /** The sandbox's egress network namespace, entered by the launcher before bwrap (absent: loopback only). */
  netns: path.optional(),
  /** The primary container's name (the `container` of exec, files and logs that means it). */
  primaryName: z.string().min(1).optional(),
  /**
   * Several containers and no egress namespace: the supervisor makes a loopback-only network
   * namespace that every container's launcher enters, so they reach each other on localhost.
   */
  sharedLoopbackNet: z.boolean().optional(),
  /** Scratch volumes: a tmpfs of `sizeBytes` at `dir` each, with the subdirectories mounts name. */
  volumes: z
    .array(
      z.strictObject({
        name: z.string().min(1),
        dir: path,
        sizeBytes: z.number().int().positive(),
        subPaths: z.array(path),
      }),
    )
    .optional(),
  /** Directories (relative to the disk) made for the sandbox user before anything starts: other containers' /workspace and /tmp. */
  dirs: z.array(path).optional(),
  /** Run to completion in order before the primary; the first to fail fails the sandbox. */
  initContainers: z
    .array(z.strictObject({ name: z.string().min(1), bwrap: z.array(z.string()) }))
    .optional(),
  /** Started beside the primary, in the same cgroups and network; killed when the primary ends. */
  sidecars: z
    .array(
      z.strictObject({
        name: z.string().min(1),
        bwrap: z.array(z.string()),
        execEnv: z.record(z.string(), z.string()),
        execCwd: path,
        /** The sidecar's own identity inside its user namespace (absent = the host uid/gid, no capability). */
        innerUid: count.optional(),
        innerGid: count.optional(),
        capAdd: z.array(z.string().min(1)).optional(),
      }),
    )
    .optional(),
  /** The ports of the sandbox's public services: the only ones the backend relays connections to. */
  servicePorts: z.array(z.number().int().min(1).max(65535)).optional(),
  /** Run inside the primary until it succeeds; only then is the sandbox RUNNING. */
  startupProbe: z
    .strictObject({
      argv: z.array(z.string()).min(1),
      periodMs: z.number().int().positive(),
      timeoutMs: z.number().int().positive(),
      failureThreshold: z.number().int().positive(),
      initialDelayMs: count,
    })
    .optional(),
});
export type SupervisorPlan = z.infer<typeof SupervisorPlanSchema>;

/** Where the supervisor finds the plan's JSON Schema (in its package, beside its modules). */
export const PLAN_SCHEMA_FILE = 'paddock_supervisor/plan.schema.json';

/** The plan's JSON Schema, as the supervisor checks it. */
export function supervisorPlanJsonSchema(): unknown {
  return z.toJSONSchema(SupervisorPlanSchema);
}
