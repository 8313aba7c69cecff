import { posix } from 'node:path';
import type { FileStat } from '../sandbox-backend';

/** Parses one `stat -c '%F|%s|%a|%Y|%n'` line (the name last, so it may contain `|`). */
export function parseStat(line: string, dir?: string): FileStat {
  const [kind = '', size = '0', mode = '0', mtime = '0', ...name] = line.split('|');
  const n = name.join('|');
  const type: FileStat['type'] = kind.startsWith('regular') ? 'file' : kind === 'directory' ? 'directory' : kind === 'symbolic link' ? 'symlink' : 'other';
  return { path: dir !== undefined && !n.startsWith('/') ? posix.join(dir, n) : n, type, size: Number(size), mode: parseInt(mode, 8), modifiedAt: new Date(Number(mtime) * 1000) };
}

export function parseLs(out: string, dir: string): FileStat[] {
  return out.split('\n').filter((l) => l.length > 0).map((l) => parseStat(l, dir));
}
