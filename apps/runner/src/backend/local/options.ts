import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { RegistryCredential } from './images/registry-client';

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
  /**
   * Image references that run as a local image, reference → local image name (e.g. `python:3.11`
   * → `paddock/base`): code written for a registry image runs where no registry can be reached.
   * See `parseImageAliases` for the `PADDOCK_IMAGE_ALIASES` form.
   */
  imageAliases?: Record<string, string>;
  bwrapPath?: string;
  /** Python 3 for the per-sandbox supervisors. Default `/usr/bin/python3`. */
  pythonPath?: string;
  /** Host uid/gid the sandboxed processes run as (inside a user namespace). Default 65534 (nobody). */
  sandboxUid?: number;
  sandboxGid?: number;
  /** Cap on each sandbox's captured stdout+stderr. Default 10 MiB. */
  logCapBytes?: number;
  /** Grace between SIGTERM and SIGKILL when the lifetime expires. Default 2000 ms. */
  lifetimeGraceMs?: number;
  /**
   * Supervisors kept ready with their launcher already inside fresh cgroups (cgroup v1 only: the
   * move into a cgroup is the slowest step of a launch). Default 2; 0 turns warm slots off.
   */
  warmSlots?: number;
  /** iproute2 and nftables, which build and filter the egress links. Defaults `/usr/sbin/ip`, `/usr/sbin/nft`. */
  ipPath?: string;
  nftPath?: string;
  /** The resolver configuration the sandboxes' resolv.conf is derived from. Default `/etc/resolv.conf`. */
  hostResolvConf?: string;
  /** Egress links (namespace + veth) kept built ahead of demand once a sandbox has had egress. Default 2. */
  warmLinks?: number;
  /** Pulls images from registries (any reference that is not a local image). Absent: no pulls. */
  registry?: RegistryOptions;
}

export interface RegistryOptions {
  /** Registries (`host[:port]`) spoken to over plain HTTP (`PADDOCK_REGISTRY_INSECURE`); all others HTTPS only. */
  insecure?: string[];
  /** Credentials by registry host (`PADDOCK_REGISTRY_CREDENTIALS`). */
  credentials?: Record<string, RegistryCredential>;
  /** Where pulled images are kept. Default `<stateDir>/images`. */
  cacheDir?: string;
  /** Bound of the image cache (unpacked size). Default 10 GiB. */
  cacheBytes?: number;
}

export interface ResolvedOptions {
  runnerId: string;
  stateDir: string;
  cgroupRoot: string;
  images: Record<string, LocalImage>;
  imageAliases: Record<string, string>;
  bwrapPath: string;
  pythonPath: string;
  sandboxUid: number;
  sandboxGid: number;
  logCapBytes: number;
  lifetimeGraceMs: number;
  warmSlots: number;
  ipPath: string;
  nftPath: string;
  hostResolvConf: string;
  warmLinks: number;
  registry?: Required<RegistryOptions>;
}

export const BASE_IMAGE = 'paddock/base';
export const DEFAULT_LOG_CAP_BYTES = 10 * 1024 * 1024;

const ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** Ids become directory and cgroup names, so they are restricted to a safe alphabet. */
export function isSafeId(id: string): boolean {
  return ID_PATTERN.test(id) && id !== '_supervisors';
}

/**
 * `PADDOCK_IMAGE_ALIASES`: comma-separated `reference=local-image` pairs, e.g.
 * `python:3.11=paddock/base,ubuntu:24.04=paddock/base`. Empty = no aliases.
 */
export function parseImageAliases(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of text.split(',').map((p) => p.trim()).filter(Boolean)) {
    const eq = pair.indexOf('=');
    const from = pair.slice(0, eq).trim();
    const to = pair.slice(eq + 1).trim();
    if (eq < 0 || !from || !to) throw new Error(`PADDOCK_IMAGE_ALIASES: ${JSON.stringify(pair)} must be reference=local-image (e.g. python:3.11=${BASE_IMAGE})`);
    out[from] = to;
  }
  return out;
}

export function resolveOptions(o: LocalBackendOptions): ResolvedOptions {
  const images = o.images ?? {};
  const imageAliases = o.imageAliases ?? {};
  for (const [from, to] of Object.entries(imageAliases)) {
    if (to !== BASE_IMAGE && !images[to]) {
      throw new Error(`image alias ${from}=${to}: ${to} is not a local image (known: ${[BASE_IMAGE, ...Object.keys(images)].join(', ')})`);
    }
  }
  const stateDir = o.stateDir ?? join('/run/paddock', o.runnerId);
  return {
    runnerId: o.runnerId,
    stateDir,
    cgroupRoot: o.cgroupRoot ?? '/sys/fs/cgroup',
    images,
    imageAliases,
    bwrapPath: o.bwrapPath ?? '/usr/bin/bwrap',
    pythonPath: o.pythonPath ?? '/usr/bin/python3',
    sandboxUid: o.sandboxUid ?? 65534,
    sandboxGid: o.sandboxGid ?? 65534,
    logCapBytes: o.logCapBytes ?? DEFAULT_LOG_CAP_BYTES,
    lifetimeGraceMs: o.lifetimeGraceMs ?? 2000,
    warmSlots: o.warmSlots ?? 2,
    ipPath: o.ipPath ?? firstExisting(['/usr/sbin/ip', '/sbin/ip', '/usr/bin/ip']),
    nftPath: o.nftPath ?? firstExisting(['/usr/sbin/nft', '/sbin/nft', '/usr/bin/nft']),
    hostResolvConf: o.hostResolvConf ?? '/etc/resolv.conf',
    warmLinks: o.warmLinks ?? 2,
    ...(o.registry
      ? {
          registry: {
            insecure: o.registry.insecure ?? [],
            credentials: o.registry.credentials ?? {},
            cacheDir: o.registry.cacheDir ?? join(stateDir, 'images'),
            cacheBytes: o.registry.cacheBytes ?? 10 * 1024 ** 3,
          },
        }
      : {}),
  };
}

function firstExisting(paths: string[]): string {
  return paths.find((p) => existsSync(p)) ?? (paths[0] as string);
}
