import { existsSync, mkdirSync, readdirSync, symlinkSync } from 'node:fs';
import { delimiter, join } from 'node:path';

/**
 * PATH as it is, except that `tool` is not found: each directory holding it is replaced by a
 * mirror under `scratch` (symlinks to everything else in it). A machine without the tool, for a
 * child process, without uninstalling anything.
 */
export function pathWithout(tool: string, scratch: string, path = process.env.PATH ?? ''): string {
  return path
    .split(delimiter)
    .filter((dir) => dir !== '')
    .map((dir, i) => {
      if (!existsSync(join(dir, tool))) return dir;
      const mirror = join(scratch, `path-without-${tool}-${i}`);
      mkdirSync(mirror, { recursive: true });
      for (const entry of readdirSync(dir)) {
        if (entry !== tool && !existsSync(join(mirror, entry)))
          {symlinkSync(join(dir, entry), join(mirror, entry));}
      }
      return mirror;
    })
    .join(delimiter);
}
