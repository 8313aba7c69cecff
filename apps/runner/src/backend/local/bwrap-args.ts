import { existsSync, lstatSync, readdirSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import type { LaunchSpec } from '../sandbox-backend';
import type { SandboxNetHandle } from './net/sandbox-networks';
import type { SandboxUser } from './images/image-config';
import { BASE_IMAGE, type LocalImage } from './options';
import { capabilityArgs, identityArgs, needsLowPorts } from './security-context';

/**
 * Where an image's root comes from: the host's /usr (built-in base image) or a rootfs directory;
 * `user` is the image's own non-root user, the sandbox's uid/gid inside its user namespace.
 */
export type ImageSource = { kind: 'host' } | { kind: 'rootfs'; path: string; user?: SandboxUser };

export function resolveImage(name: string, images: Record<string, LocalImage>): ImageSource | undefined {
  if (name === '' || name === 'default' || name === BASE_IMAGE) return { kind: 'host' };
  const img = images[name];
  return img ? { kind: 'rootfs', path: img.rootfs } : undefined;
}

const HOST_ROOT_LINKS = ['bin', 'sbin', 'lib', 'lib32', 'lib64', 'libx32'];
/** The /etc files programs need to resolve users, libraries, time zones, hosts and TLS roots. */
const HOST_ETC = [
  'passwd',
  'group',
  'nsswitch.conf',
  'hosts',
  'host.conf',
  'resolv.conf',
  'ld.so.cache',
  'ld.so.conf',
  'ld.so.conf.d',
  'localtime',
  'alternatives',
  'ssl',
  'ca-certificates',
  'mime.types',
];
/** Mount points the backend provides itself; a rootfs's own copies are ignored. */
const RESERVED = new Set(['proc', 'dev', 'sys', 'tmp', 'workspace', 'run']);

function entryArgs(hostPath: string, name: string): string[] {
  const st = lstatSync(hostPath);
  if (st.isSymbolicLink()) return ['--symlink', readlinkSync(hostPath), `/${name}`];
  return ['--ro-bind', hostPath, `/${name}`];
}

/** bwrap arguments that build the read-only root of an image on top of an empty tmpfs. */
export function imageMountArgs(src: ImageSource): string[] {
  const args: string[] = [];
  if (src.kind === 'host') {
    args.push('--ro-bind', '/usr', '/usr');
    for (const name of HOST_ROOT_LINKS) {
      if (existsSync(`/${name}`)) args.push(...entryArgs(`/${name}`, name));
    }
    args.push('--dir', '/etc');
    for (const f of HOST_ETC) args.push('--ro-bind-try', `/etc/${f}`, `/etc/${f}`);
    args.push('--dir', '/var', '--symlink', '../tmp', '/var/tmp');
    return args;
  }
  for (const name of readdirSync(src.path)) {
    if (!RESERVED.has(name)) args.push(...entryArgs(join(src.path, name), name));
  }
  return args;
}

export const SANDBOX_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
export const WORKSPACE = '/workspace';

/** The environment every process of the sandbox starts with (main process and exec). */
export function baseEnv(spec: Pick<LaunchSpec, 'sandboxId' | 'env'>): Record<string, string> {
  return { PATH: SANDBOX_PATH, HOME: WORKSPACE, HOSTNAME: spec.sandboxId, TERM: 'xterm', ...spec.env };
}

/** What the main process runs: the spec's argv, or an idle keep-alive so the sandbox stays up for exec. */
export function mainCommand(spec: Pick<LaunchSpec, 'command'>): string[] {
  return spec.command.length > 0 ? spec.command : ['sleep', 'infinity'];
}

/** The sandbox's resolv.conf over the image's, where the image has one to cover. */
function resolvConfArgs(image: ImageSource, net: SandboxNetHandle | undefined): string[] {
  if (!net) return [];
  if (image.kind === 'rootfs') {
    const target = join(image.path, 'etc', 'resolv.conf');
    if (!existsSync(target) || !lstatSync(target).isFile()) return [];
  }
  return ['--ro-bind', net.resolvConfPath, '/etc/resolv.conf'];
}

/**
 * Where one container of a sandbox with several finds its own /workspace and /tmp, the volumes
 * it mounts (bwrap mount arguments, after /workspace and /tmp so a mount inside them works), and
 * whether it keeps its launcher's network namespace: containers of one sandbox share one.
 */
export interface ContainerLayout {
  workspaceDir?: string;
  tmpDir?: string;
  mounts: string[];
  shareNet: boolean;
}

/**
 * The full bwrap argv. fd 3 receives bwrap's info (the namespace init's pid), fd 4 carries the
 * seccomp program. Every namespace is new, the user namespace cannot be nested further, no
 * capability is kept, the root is read-only, and /workspace and /tmp are the only writable places
 * (both on the sandbox's size-capped tmpfs). The network namespace is bwrap's own (loopback only)
 * unless the sandbox has an egress link (`net`): its launcher has then already entered the
 * sandbox's namespace, which bwrap keeps. The host's network is never shared.
 */
export function bwrapArgs(
  spec: Pick<LaunchSpec, 'sandboxId' | 'env' | 'command' | 'workingDir' | 'securityContext'>,
  image: ImageSource,
  diskDir: string,
  net?: SandboxNetHandle,
  layout?: ContainerLayout,
): string[] {
  const env = baseEnv(spec);
  // A container given low ports binds them in a namespace its launcher made (or entered), never bwrap's own.
  const shareNet = !!net || !!layout?.shareNet || needsLowPorts(spec);
  return [
    'bwrap',
    '--unshare-all',
    ...(shareNet ? ['--share-net'] : []),
    '--unshare-user',
    ...identityArgs(spec.securityContext, image.kind === 'rootfs' ? image.user : undefined),
    '--disable-userns',
    '--die-with-parent',
    '--new-session',
    '--cap-drop',
    'ALL',
    ...capabilityArgs(spec.securityContext),
    '--hostname',
    spec.sandboxId,
    '--tmpfs',
    '/',
    ...imageMountArgs(image),
    ...resolvConfArgs(image, net),
    '--proc',
    '/proc',
    '--dev',
    '/dev',
    '--bind',
    layout?.workspaceDir ?? join(diskDir, 'workspace'),
    WORKSPACE,
    '--bind',
    layout?.tmpDir ?? join(diskDir, 'tmp'),
    '/tmp',
    ...(layout?.mounts ?? []),
    '--remount-ro',
    '/',
    '--chdir',
    spec.workingDir || WORKSPACE,
    '--clearenv',
    ...Object.entries(env).flatMap(([k, v]) => ['--setenv', k, v]),
    '--info-fd',
    '3',
    '--seccomp',
    '4',
    '--',
    ...mainCommand(spec),
  ];
}
