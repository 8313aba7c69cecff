import type { FieldViolation, ResolvedSandboxSpec } from '@paddock/contracts';
import type { LaunchSecurityContext, LaunchSpec } from '../sandbox-backend';
import { capabilityName, containersWithPaths, PLATFORM_SECCOMP_PROFILE } from '../security-context';
import type { SandboxUser } from './images/image-config';
import type { ImageSource } from './bwrap-args';

/**
 * A container's `securityContext` on the local backend.
 *
 * - `runAsUser` / `runAsGroup`: the uid/gid the container's processes have inside the sandbox's
 *   user namespace (bwrap `--uid` / `--gid`, over an image's own user). That namespace maps only
 *   that one id, to the runner's unprivileged host uid (65534): uid 0 inside is host 65534
 *   outside, holds no capability (bwrap drops them all), and every file the platform writes for
 *   the sandbox is owned by the host uid, so it is the container's own whatever id it runs as.
 * - `capabilitiesAdd`: only `NET_BIND_SERVICE`. bwrap runs the workload in a user namespace
 *   nested inside the one that owns the sandbox's other namespaces (its network, mounts, pids),
 *   so a capability kept there (`--cap-add`) reaches nothing the sandbox has: every other
 *   capability would be held in name only, and the ones that could matter (SYS_ADMIN, NET_ADMIN,
 *   SYS_PTRACE, ...) are for the calls the seccomp deny list refuses. Both are refused by name.
 *   `NET_BIND_SERVICE` is given its effect where it applies: the sandbox's network namespace (its
 *   own, never the host's) lets ports below 1024 be bound (`ip_unprivileged_port_start = 0`,
 *   written by the launcher as root on the host; the sandbox's user namespace cannot change it).
 *   That namespace is shared by the sandbox's containers, as in a pod, so low ports open to all of
 *   them once one container asks.
 * - `seccompProfile`: the deny list is the only profile; anything else (`Unconfined`,
 *   `Localhost/...`) is refused by the spec-feature check, and again here.
 */

/** The capabilities a local sandbox can be given, in the policy engine's form. */
export const LOCAL_CAPABILITIES: readonly string[] = ['NET_BIND_SERVICE'];

/**
 * Capabilities whose purpose is the kernel surface the sandbox's seccomp filter and its nested
 * user namespace exist to keep closed: named in the refusal, so its reason is the right one.
 */
const ISOLATION_CAPABILITIES = new Set([
  'SYS_ADMIN', 'SYS_PTRACE', 'SYS_MODULE', 'SYS_RAWIO', 'SYS_BOOT', 'SYS_TIME', 'BPF', 'PERFMON',
  'NET_ADMIN', 'NET_RAW', 'MAC_ADMIN', 'MAC_OVERRIDE', 'SYSLOG', 'AUDIT_CONTROL', 'DAC_READ_SEARCH',
  'CHECKPOINT_RESTORE', 'SYS_RESOURCE', 'SYS_NICE', 'IPC_LOCK', 'LINUX_IMMUTABLE', 'SETPCAP', 'SETFCAP', 'MKNOD',
]);

function capabilityRefusal(cap: string): string {
  const name = capabilityName(cap);
  if (name === 'ALL') return 'the local backend gives no capability beyond NET_BIND_SERVICE, and ALL is every other one';
  if (ISOLATION_CAPABILITIES.has(name)) {
    return `CAP_${name} would open what the local sandbox's nested user namespace and seccomp deny list keep closed; only NET_BIND_SERVICE is given`;
  }
  return `CAP_${name} would be held in name only: the local sandbox's processes run in a nested user namespace that owns none of its other namespaces and maps only its own uid; only NET_BIND_SERVICE is given`;
}

/** What the containers' security contexts ask that the local backend cannot give, each naming its field. */
export function localSecurityViolations(resolved: ResolvedSandboxSpec): FieldViolation[] {
  const out: FieldViolation[] = [];
  for (const { c, path } of containersWithPaths(resolved)) {
    const sc = c.securityContext;
    sc.capabilitiesAdd.forEach((cap, i) => {
      if (LOCAL_CAPABILITIES.includes(capabilityName(cap))) return;
      out.push({ field: `${path}.securityContext.capabilitiesAdd[${i}]`, rule: 'runner_capability', description: capabilityRefusal(cap) });
    });
    if (sc.seccompProfile !== PLATFORM_SECCOMP_PROFILE) {
      out.push({
        field: `${path}.securityContext.seccompProfile`,
        rule: 'runner_capability',
        description: `the local backend always applies its seccomp deny list (${PLATFORM_SECCOMP_PROFILE}); it never runs a sandbox unconfined or under another profile`,
      });
    }
  }
  return out;
}

/** The uid/gid a container runs as inside its user namespace: the spec's, else the image's own user; absent = the host uid/gid. */
export function innerIdentityOf(sc: LaunchSecurityContext | undefined, imageUser: SandboxUser | undefined): { uid?: number; gid?: number } {
  const uid = sc?.runAsUser ?? imageUser?.uid;
  const gid = sc?.runAsGroup ?? imageUser?.gid;
  return { ...(uid !== undefined ? { uid } : {}), ...(gid !== undefined ? { gid } : {}) };
}

/** bwrap's `--uid` / `--gid` for that identity. */
export function identityArgs(sc: LaunchSecurityContext | undefined, imageUser: SandboxUser | undefined): string[] {
  const { uid, gid } = innerIdentityOf(sc, imageUser);
  return [...(uid !== undefined ? ['--uid', String(uid)] : []), ...(gid !== undefined ? ['--gid', String(gid)] : [])];
}

/** The capabilities a container keeps, as the kernel names them (`CAP_NET_BIND_SERVICE`): only those the backend gives. */
export function keptCapabilities(sc: LaunchSecurityContext | undefined): string[] {
  return (sc?.capabilitiesAdd ?? []).filter((c) => LOCAL_CAPABILITIES.includes(c)).map((c) => `CAP_${c}`);
}

/** bwrap's `--cap-add` for each kept capability (after `--cap-drop ALL`, which bwrap applies first). */
export function capabilityArgs(sc: LaunchSecurityContext | undefined): string[] {
  return keptCapabilities(sc).flatMap((c) => ['--cap-add', c]);
}

/** Whether some container of the launch binds ports below 1024 (`NET_BIND_SERVICE`): its network namespace then allows them. */
export function needsLowPorts(spec: Pick<LaunchSpec, 'securityContext' | 'sidecars' | 'initContainers'>): boolean {
  return [spec.securityContext, ...(spec.sidecars ?? []).map((c) => c.securityContext), ...(spec.initContainers ?? []).map((c) => c.securityContext)].some((sc) =>
    keptCapabilities(sc).includes('CAP_NET_BIND_SERVICE'),
  );
}

/**
 * What the supervisor needs to run an exec, a file operation or a probe as the container runs:
 * its uid/gid inside the user namespace (absent = the host uid/gid) and the capabilities it keeps.
 */
export interface ExecIdentity {
  innerUid?: number;
  innerGid?: number;
  capAdd?: string[];
}

export function execIdentityOf(sc: LaunchSecurityContext | undefined, image: ImageSource): ExecIdentity {
  const { uid, gid } = innerIdentityOf(sc, image.kind === 'rootfs' ? image.user : undefined);
  const caps = keptCapabilities(sc);
  return { ...(uid !== undefined ? { innerUid: uid } : {}), ...(gid !== undefined ? { innerGid: gid } : {}), ...(caps.length ? { capAdd: caps } : {}) };
}
