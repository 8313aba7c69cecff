/**
 * Source of the per-sandbox supervisor, a small Python 3 program (stdlib only) that the backend
 * writes into its state directory and runs detached (own session) for every sandbox.
 *
 * Why a separate process, and why Python:
 * - Sandboxes must outlive a runner restart, and nothing may outlive its lifetime. The supervisor
 *   is the sandbox's parent, enforces the deadline, records the exit and kills the whole cgroup,
 *   whether or not the runner is alive. If the supervisor itself dies, bwrap dies with it
 *   (PR_SET_PDEATHSIG + `--die-with-parent`): the sandbox fails closed.
 * - It captures the main process's stdout/stderr into a framed, size-capped log on the host side,
 *   so a sandbox can neither exceed the cap nor tamper with the log.
 * - Exec and file requests arrive on a Unix socket; for each one it forks a handler that joins the
 *   sandbox's cgroups, enters its namespaces (setns), drops to the sandbox uid with no new
 *   privileges and the same seccomp filter, and runs the command with the request's sockets as
 *   stdio (zero copy, kernel backpressure). This costs a fork, not a fresh bwrap (~0.5 ms vs ~4 ms),
 *   and needs no helper binary inside the image.
 * - Python is on every Debian host, starts in tens of milliseconds (hidden by the runner's pool of
 *   pre-started supervisors) and has setns/prctl/mount through ctypes. A shell could not frame logs.
 *
 * Log framing: each record is a 16-byte header `<u32 length, u8 stream (0 out, 1 err), 3 pad,
 * f64 unix seconds>` followed by `length` bytes. Offsets exposed to clients count payload bytes only.
 *
 * Keep this file free of backticks and dollar-brace sequences: it is a raw template literal.
 */
export declare const SUPERVISOR_PY: string;
