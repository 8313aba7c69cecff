import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The text of the protocol definitions in `proto/`. The bundled provider (scripts/bundle.mjs)
 * replaces this module with the same texts inlined, so the installed binary is one file.
 */
const dir = join(__dirname, '..', '..', 'proto');
const read = (name: string): string => readFileSync(join(dir, name), 'utf8');

export const PROTO_SOURCES: Record<string, string> = {
  'tfplugin6.proto': read('tfplugin6.proto'),
  'go-plugin.proto': read('go-plugin.proto'),
  'health.proto': read('health.proto'),
};
