// Bundles the provider into one CommonJS file (dist/bundle/terraform-provider-coreweave.cjs):
// Terraform runs the plugin several times per command, and one file with no module resolution
// starts faster and installs as a single executable. Workspace packages are bundled from their
// sources; the protocol definitions are inlined in place of the module that reads them from disk.
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const protoDir = join(root, 'proto');
const sources = Object.fromEntries(
  readdirSync(protoDir)
    .filter((f) => f.endsWith('.proto'))
    .map((f) => [f, readFileSync(join(protoDir, f), 'utf8')]),
);

await build({
  entryPoints: [join(root, 'src', 'main.ts')],
  outfile: join(root, 'dist', 'bundle', 'terraform-provider-coreweave.cjs'),
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  conditions: ['@paddock/source'],
  legalComments: 'eof',
  logLevel: 'warning',
  plugins: [
    {
      name: 'inline-protocol-definitions',
      setup(b) {
        b.onLoad({ filter: /[\\/]plugin[\\/]proto-sources\.ts$/ }, () => ({
          contents: `export const PROTO_SOURCES: Record<string, string> = ${JSON.stringify(sources)};`,
          loader: 'ts',
        }));
      },
    },
  ],
});
