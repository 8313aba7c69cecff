import { lchownSync, lstatSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join, posix } from 'node:path';
import * as tar from 'tar';
import { ImagePullError } from './pull-error';

const WHITEOUT = '.wh.';
const OPAQUE = '.wh..wh..opq';

/** `a/b/../c` → `a/c`; anything that leaves the root (`..`, absolute after normalising) → undefined. */
function cleanRelative(path: string): string | undefined {
  const norm = posix.normalize(`/${path}`).slice(1).replace(/\/$/, '');
  if (norm === '' || norm.startsWith('..')) return norm === '' ? '' : undefined;
  return norm;
}

/**
 * The path of `rel` under `root` when no directory on the way is a symbolic link: a whiteout
 * must never delete through a link a lower layer planted (`evil -> /`, then `evil/.wh.etc`).
 */
function insideRoot(root: string, rel: string): string | undefined {
  const parts = rel.split('/').filter(Boolean);
  let at = root;
  for (const p of parts.slice(0, -1)) {
    at = join(at, p);
    try {
      if (!lstatSync(at).isDirectory()) return undefined;
    } catch {
      return undefined;
    }
  }
  return join(root, ...parts);
}

/** What a layer deletes from the layers below it. */
export interface LayerWhiteouts {
  /** Paths (relative to the root) a `.wh.<name>` removes. */
  whiteouts: string[];
  /** Directories (relative; `''` = the root) a `.wh..wh..opq` empties. */
  opaques: string[];
}

/**
 * Reads a layer's whiteouts (the first of the two passes over it). Separate so that the pull can
 * scan each layer as soon as it is downloaded, while the others still download.
 */
export async function scanWhiteouts(layerFile: string): Promise<LayerWhiteouts> {
  const whiteouts: string[] = [];
  const opaques: string[] = [];
  await tar
    .t({
      file: layerFile,
      onReadEntry: (e) => {
        const rel = cleanRelative(e.path);
        if (rel === undefined) return;
        const base = posix.basename(rel);
        const dir = posix.dirname(rel) === '.' ? '' : posix.dirname(rel);
        if (base === OPAQUE) opaques.push(dir);
        else if (base.startsWith(WHITEOUT)) whiteouts.push(posix.join(dir, base.slice(WHITEOUT.length)));
      },
    })
    .catch((e: unknown) => {
      throw new ImagePullError('IMAGE_PULL_FAILED', `layer ${layerFile} is not a readable tar archive: ${(e as Error).message}`);
    });
  return { whiteouts, opaques };
}

/**
 * Applies one layer (a tar, gzip-compressed or not) on top of `root`, the OCI way: first the
 * layer's whiteouts delete what lower layers put there (`.wh.name` removes `name`,
 * `.wh..wh..opq` empties its directory), then its entries are written. Two passes because an
 * opaque marker may come after entries of its own directory in the archive, and those must stay.
 *
 * What is written is confined: no path outside the root, nothing through a symbolic link, no
 * device nodes or FIFOs, no setuid/setgid bits.
 */
export async function unpackLayer(layerFile: string, root: string, scan?: Promise<LayerWhiteouts>): Promise<void> {
  const { whiteouts, opaques } = await (scan ?? scanWhiteouts(layerFile));
  for (const dir of opaques) {
    const at = dir === '' ? root : insideRoot(root, `${dir}/.`);
    if (!at) continue;
    try {
      if (!lstatSync(at).isDirectory()) continue;
    } catch {
      continue;
    }
    for (const name of readdirSync(at)) rmSync(join(at, name), { recursive: true, force: true });
  }
  for (const rel of whiteouts) {
    const at = insideRoot(root, rel);
    if (at && at !== root) rmSync(at, { recursive: true, force: true });
  }
  const problems: string[] = [];
  await tar.x({
    file: layerFile,
    cwd: root,
    // The archive's owners are kept until every layer is in (`normalizeOwnership` then maps them):
    // the image's user may be a name only its own /etc/passwd knows.
    preserveOwner: true,
    chmod: true,
    processUmask: 0,
    unlink: true,
    onwarn: (code, message) => {
      // Entries tar refuses (through a link, outside the root) are skipped, not fatal; the rest are.
      if (code !== 'TAR_ENTRY_INFO' && code !== 'TAR_ENTRY_UNSUPPORTED') problems.push(`${code}: ${String(message)}`);
    },
    filter: (path, entry) => {
      if (!('type' in entry)) return true;
      const base = posix.basename(path);
      if (base.startsWith(WHITEOUT)) return false;
      if (!['File', 'OldFile', 'ContiguousFile', 'Directory', 'SymbolicLink', 'Link'].includes(entry.type)) return false;
      if (entry.mode !== undefined) entry.mode &= 0o1777;
      return true;
    },
  }).catch((e: unknown) => {
    throw new ImagePullError('IMAGE_PULL_FAILED', `layer ${layerFile} could not be unpacked: ${(e as Error).message}`);
  });
  if (problems.some((p) => p.startsWith('TAR_BAD_ARCHIVE') || p.startsWith('TAR_ABORT'))) {
    throw new ImagePullError('IMAGE_PULL_FAILED', `layer ${layerFile} could not be unpacked: ${problems.join('; ')}`);
  }
}

/**
 * After the last layer: every file goes to host root, except the image user's own (uid `imageUid`
 * in the archive), which go to the sandbox's host uid/gid so that user can read its private
 * files. Returns the root's size in bytes (what the cache counts).
 */
export function normalizeOwnership(root: string, imageUid: number | undefined, hostUid: number, hostGid: number): number {
  let bytes = 0;
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      const at = join(dir, name);
      const st = lstatSync(at);
      bytes += st.size;
      const mine = imageUid !== undefined && imageUid !== 0 && st.uid === imageUid;
      const [uid, gid] = mine ? [hostUid, hostGid] : [0, 0];
      if (st.uid !== uid || st.gid !== gid) lchownSync(at, uid, gid);
      if (st.isDirectory()) walk(at);
    }
  };
  walk(root);
  return bytes;
}

/** An empty directory for a root filesystem being assembled. */
export function freshRoot(path: string): void {
  rmSync(path, { recursive: true, force: true });
  mkdirSync(path, { recursive: true, mode: 0o755 });
}
