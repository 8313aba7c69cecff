import { join, posix } from 'node:path';
import type { LaunchContainer, LaunchSpec, LaunchVolumeMount } from '../sandbox-backend';
import { baseEnv, bwrapArgs, WORKSPACE, type ImageSource } from './bwrap-args';
import type { SandboxNetHandle } from './net/sandbox-networks';
import type { SupervisorPlan } from './supervisor-plan';
import { execIdentityOf, type ExecIdentity } from './security-context';

/**
 * The several containers of one local sandbox: init containers, the primary and its sidecars.
 *
 * Each container is its own bwrap (its own image, mount, pid, ipc and user namespaces), all in
 * the sandbox's cgroups (so its limits cover them together) and all in one network namespace:
 * the sandbox's egress namespace when it has one, otherwise a loopback-only namespace the
 * supervisor makes for the sandbox, so `localhost` reaches every container as in a pod. Scratch
 * volumes are tmpfs mounts the supervisor makes under the sandbox's state directory, each capped
 * at its size, bound into every container that mounts them. The primary keeps the sandbox's own
 * /workspace and /tmp; every other container gets its own pair on the sandbox's disk.
 */

/** Why a launch cannot be built as asked: the sandbox fails with this reason and message. */
export class LaunchRefused extends Error {
  constructor(
    readonly reason: 'FAILED_TO_START' | 'IMAGE_NOT_FOUND',
    message: string,
  ) {
    super(message);
  }
}

/** What the supervisor's plan gets for a sandbox's containers and volumes (all absent for a lone container without volumes). */
export type PodPlanFields = Pick<
  SupervisorPlan,
  | 'sidecars'
  | 'initContainers'
  | 'volumes'
  | 'dirs'
  | 'sharedLoopbackNet'
  | 'primaryName'
  | 'startupProbe'
>;

const NAME = /^[a-z0-9]([-a-z0-9.]{0,61}[a-z0-9])?$/;
/** Mount points a volume may not cover: the sandbox's kernel interfaces. */
const FORBIDDEN_MOUNTS = ['/proc', '/dev', '/sys'];

/** `/workspace/a/b` → `workspace/a/b` under the sandbox's disk; anything else is refused. */
export function sandboxFileToDiskPath(path: string): string | undefined {
  if (!path.startsWith('/')) return undefined;
  const norm = posix.normalize(path);
  for (const top of ['/workspace/', '/tmp/']) {
    if (norm.startsWith(top) && norm.length > top.length) return norm.slice(1);
  }
  return undefined;
}

/** Whether a launch needs more than the single-bwrap path: several containers, volumes or a probe. */
export function isPod(spec: LaunchSpec): boolean {
  return (
    (spec.sidecars?.length ?? 0) > 0 ||
    (spec.initContainers?.length ?? 0) > 0 ||
    (spec.volumes?.length ?? 0) > 0 ||
    !!spec.startupProbe
  );
}

/** Where the supervisor mounts a volume's tmpfs. */
export function volumeDir(sandboxDir: string, name: string): string {
  return join(sandboxDir, 'volumes', name);
}

/** A container's own directory on the sandbox's disk (relative to it): its /workspace and /tmp live there. */
function containerDiskRel(name: string): string {
  return posix.join('c', name);
}

function checkMount(who: string, i: number, m: LaunchVolumeMount, volumes: Set<string>): void {
  const field = `${who}.volumeMounts[${i}]`;
  if (!volumes.has(m.volume))
    {throw new LaunchRefused(
      'FAILED_TO_START',
      `${field}.volume ${JSON.stringify(m.volume)} names no volume of the sandbox`,
    );}
  const norm = posix.normalize(m.mountPath);
  if (!m.mountPath.startsWith('/') || norm !== m.mountPath.replace(/\/+$/, '') || norm === '/') {
    throw new LaunchRefused(
      'FAILED_TO_START',
      `${field}.mountPath ${JSON.stringify(m.mountPath)} must be an absolute, canonical path other than /`,
    );
  }
  if (FORBIDDEN_MOUNTS.some((f) => norm === f || norm.startsWith(`${f}/`))) {
    throw new LaunchRefused(
      'FAILED_TO_START',
      `${field}.mountPath ${JSON.stringify(m.mountPath)} may not be under ${FORBIDDEN_MOUNTS.join(', ')}`,
    );
  }
  if (m.subPath !== undefined && m.subPath !== '') {
    const sub = m.subPath;
    if (
      sub.startsWith('/') ||
      posix.normalize(sub) !== sub ||
      sub.split('/').some((s) => s === '..' || s === '.' || s === '')
    ) {
      throw new LaunchRefused(
        'FAILED_TO_START',
        `${field}.subPath ${JSON.stringify(sub)} must be relative and canonical (no ., .. or empty segments)`,
      );
    }
  }
}

/** bwrap mount arguments for a container's volume mounts (read-only ones with --ro-bind). */
function mountArgs(sandboxDir: string, mounts: LaunchVolumeMount[]): string[] {
  return mounts.flatMap((m) => {
    const src = m.subPath
      ? join(volumeDir(sandboxDir, m.volume), m.subPath)
      : volumeDir(sandboxDir, m.volume);
    return [m.readOnly ? '--ro-bind' : '--bind', src, posix.normalize(m.mountPath)];
  });
}

/**
 * Builds the plan fields for a sandbox's containers, volumes and probe, and the primary's mount
 * arguments. Refuses (LaunchRefused, naming the field) what it cannot honour exactly.
 */
export function buildPod(input: {
  spec: LaunchSpec;
  sandboxDir: string;
  diskDir: string;
  net: SandboxNetHandle | undefined;
  resolveImage: (name: string) => ImageSource | undefined;
  knownImages: () => string[];
}): { fields: PodPlanFields; primaryMounts: string[]; files: SupervisorPlan['files'] } {
  const { spec, sandboxDir, diskDir, net } = input;
  const volumes = spec.volumes ?? [];
  const names = new Set<string>();
  for (const [i, v] of volumes.entries()) {
    if (!NAME.test(v.name))
      {throw new LaunchRefused(
        'FAILED_TO_START',
        `volumes[${i}].name ${JSON.stringify(v.name)} must be a DNS-1123 label`,
      );}
    if (names.has(v.name))
      {throw new LaunchRefused(
        'FAILED_TO_START',
        `volumes[${i}].name ${JSON.stringify(v.name)} is not unique`,
      );}
    if (!(v.sizeBytes > 0))
      {throw new LaunchRefused(
        'FAILED_TO_START',
        `volumes[${i}].scratch.size must be positive on the local backend`,
      );}
    if (v.volumeId) throw new LaunchRefused('FAILED_TO_START', `volumes[${i}].volumeId: registered volumes are not supported by the local backend`);
    if (v.restoreFromSnapshotId) {
      throw new LaunchRefused('FAILED_TO_START', `volumes[${i}].scratch.restoreFromSnapshotId: snapshot restores are not supported by the local backend`);
    }
    names.add(v.name);
  }
  const primaryName = spec.primaryName ?? 'main';
  const primaryMountsIn = spec.volumeMounts ?? [];
  primaryMountsIn.forEach((m, i) =>
    checkMount(`container ${JSON.stringify(primaryName)}`, i, m, names),
  );
  const others = [
    ...(spec.initContainers ?? []).map((c) => ({ c, init: true })),
    ...(spec.sidecars ?? []).map((c) => ({ c, init: false })),
  ];
  const seen = new Set([primaryName]);
  for (const { c } of others) {
    if (!NAME.test(c.name))
      {throw new LaunchRefused(
        'FAILED_TO_START',
        `container name ${JSON.stringify(c.name)} must be a DNS-1123 label`,
      );}
    if (seen.has(c.name))
      {throw new LaunchRefused(
        'FAILED_TO_START',
        `container name ${JSON.stringify(c.name)} is not unique in the sandbox`,
      );}
    seen.add(c.name);
    c.volumeMounts.forEach((m, i) =>
      checkMount(`container ${JSON.stringify(c.name)}`, i, m, names),
    );
  }
  // Several containers share one network namespace: the egress one, or a loopback-only one.
  const shareNet = others.length > 0;
  const subPaths = new Map<string, Set<string>>([...names].map((n) => [n, new Set<string>()]));
  for (const m of [...primaryMountsIn, ...others.flatMap(({ c }) => c.volumeMounts)]) {
    if (m.subPath) subPaths.get(m.volume)?.add(m.subPath);
  }
  const dirs: string[] = [];
  const files: SupervisorPlan['files'] = [];
  const build = (
    c: LaunchContainer,
  ): { name: string; bwrap: string[]; execEnv: Record<string, string>; execCwd: string } & ExecIdentity => {
    const image = input.resolveImage(c.image);
    if (!image) {
      throw new LaunchRefused(
        'IMAGE_NOT_FOUND',
        `container ${JSON.stringify(c.name)}: image ${JSON.stringify(c.image)} is not known to this runner (known: ${input.knownImages().join(', ')})`,
      );
    }
    const own = containerDiskRel(c.name);
    dirs.push(posix.join(own, 'workspace'), posix.join(own, 'tmp'));
    for (const f of c.files) {
      const rel = sandboxFileToDiskPath(f.path);
      if (!rel)
        {throw new LaunchRefused(
          'FAILED_TO_START',
          `container ${JSON.stringify(c.name)}: files[].path ${JSON.stringify(f.path)} must be an absolute path under /workspace or /tmp`,
        );}
      files.push({ rel: posix.join(own, rel), b64: f.content.toString('base64') });
    }
    const identity = {
      sandboxId: spec.sandboxId,
      env: c.env,
      command: c.command,
      ...(c.workingDir ? { workingDir: c.workingDir } : {}),
      ...(c.securityContext ? { securityContext: c.securityContext } : {}),
    };
    const bwrap = bwrapArgs(identity, image, diskDir, net, {
      workspaceDir: join(diskDir, own, 'workspace'),
      tmpDir: join(diskDir, own, 'tmp'),
      mounts: mountArgs(sandboxDir, c.volumeMounts),
      shareNet: true,
    });
    return { name: c.name, bwrap, execEnv: baseEnv(identity), execCwd: c.workingDir || WORKSPACE, ...execIdentityOf(c.securityContext, image) };
  };
  const initContainers = (spec.initContainers ?? []).map((c) => {
    const b = build(c);
    return { name: b.name, bwrap: b.bwrap };
  });
  const sidecars = (spec.sidecars ?? []).map(build);
  const fields: PodPlanFields = {
    ...(spec.primaryName ? { primaryName: spec.primaryName } : {}),
    ...(sidecars.length > 0 ? { sidecars } : {}),
    ...(initContainers.length > 0 ? { initContainers } : {}),
    ...(volumes.length > 0
      ? {
          volumes: volumes.map((v) => ({
            name: v.name,
            dir: volumeDir(sandboxDir, v.name),
            sizeBytes: v.sizeBytes,
            subPaths: [...(subPaths.get(v.name) ?? [])],
          })),
        }
      : {}),
    ...(dirs.length > 0 ? { dirs } : {}),
    ...(shareNet && !net ? { sharedLoopbackNet: true } : {}),
    ...(spec.startupProbe
      ? {
          startupProbe: {
            argv: spec.startupProbe.exec,
            periodMs: Math.round(spec.startupProbe.periodSeconds * 1000),
            timeoutMs: Math.round(spec.startupProbe.timeoutSeconds * 1000),
            failureThreshold: spec.startupProbe.failureThreshold,
            initialDelayMs: Math.round(spec.startupProbe.initialDelaySeconds * 1000),
          },
        }
      : {}),
  };
  if (spec.startupProbe && spec.startupProbe.exec.length === 0)
    {throw new LaunchRefused('FAILED_TO_START', 'startupProbe.exec must name a command');}
  return { fields, primaryMounts: mountArgs(sandboxDir, primaryMountsIn), files };
}

/** The primary's layout when the sandbox has several containers: its usual disk, the volumes, the shared network. */
export function primaryLayout(
  spec: LaunchSpec,
  primaryMounts: string[],
): { mounts: string[]; shareNet: boolean } {
  return {
    mounts: primaryMounts,
    shareNet: (spec.sidecars?.length ?? 0) > 0 || (spec.initContainers?.length ?? 0) > 0,
  };
}
