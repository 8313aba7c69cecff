import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { LaunchSpec } from '../../sandbox-backend';
import type { ImageSource } from '../bwrap-args';
import type { ResolvedOptions } from '../options';
import { ImageStore, type StoredImage } from './image-store';
import { RegistryClient } from './registry-client';

/** Name of the file in a sandbox's state directory that records which cached image it runs. */
export const IMAGE_DIGEST_FILE = 'image-digest';

function archName(): string {
  return process.arch === 'x64' ? 'amd64' : process.arch === 'arm64' ? 'arm64' : process.arch;
}

/** The image cache of a backend whose options enable registry pulls, else undefined. */
export function createImageStore(o: ResolvedOptions): ImageStore | undefined {
  const r = o.registry;
  if (!r) return undefined;
  const client = new RegistryClient({ insecure: r.insecure, credentials: r.credentials, platform: { os: 'linux', architecture: archName() } });
  return new ImageStore({
    dir: r.cacheDir,
    client,
    maxBytes: r.cacheBytes,
    hostUid: o.sandboxUid,
    hostGid: o.sandboxGid,
    inUse: () => imagesInUse(join(o.stateDir, 'sandboxes')),
  });
}

/** Digests named by the sandboxes that still have a state directory (running, or not yet reaped). */
export function imagesInUse(sandboxesDir: string): Set<string> {
  const out = new Set<string>();
  let ids: string[];
  try {
    ids = readdirSync(sandboxesDir);
  } catch {
    return out;
  }
  for (const id of ids) {
    try {
      out.add(readFileSync(join(sandboxesDir, id, IMAGE_DIGEST_FILE), 'utf8').trim());
    } catch {
      // a sandbox of a local image
    }
  }
  return out;
}

/**
 * The spec as the image completes it: the image's Entrypoint + Cmd when the spec names no
 * command, its Env under the spec's, its WorkingDir when the spec names none.
 */
export function withImageConfig(spec: LaunchSpec, image: StoredImage): LaunchSpec {
  const command = spec.command.length > 0 ? spec.command : [...image.run.entrypoint, ...image.run.cmd];
  const workingDir = spec.workingDir || image.run.workingDir;
  return { ...spec, command, env: { ...image.run.env, ...spec.env }, ...(workingDir ? { workingDir } : {}) };
}

export function imageSourceOf(image: StoredImage): ImageSource {
  return { kind: 'rootfs', path: image.rootfs, ...(image.user ? { user: image.user } : {}) };
}
