#!/usr/bin/env node
// Regenerates src/gen from proto/ with the pinned buf and protoc-gen-es (both devDependencies,
// both offline: buf's binary ships in its npm package and the plugin runs locally).
// `--check` generates into a scratch directory and fails if it differs from the committed code.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';

const root = join(import.meta.dirname, '..');
const bin = join(root, 'node_modules', '.bin');
const env = { ...process.env, PATH: `${bin}:${process.env.PATH ?? ''}` };

function generate(into) {
  const work = mkdtempSync(join(tmpdir(), 'paddock-proto-'));
  try {
    cpSync(join(root, 'proto'), join(work, 'proto'), { recursive: true });
    cpSync(join(root, 'buf.yaml'), join(work, 'buf.yaml'));
    cpSync(join(root, 'buf.gen.yaml'), join(work, 'buf.gen.yaml'));
    execFileSync(join(bin, 'buf'), ['generate'], { cwd: work, env, stdio: 'inherit' });
    rmSync(into, { recursive: true, force: true });
    cpSync(join(work, 'src', 'gen'), into, { recursive: true });
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

function files(dir) {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? files(p) : [p];
  });
}

const target = join(root, 'src', 'gen');
if (process.argv.includes('--check')) {
  const scratch = mkdtempSync(join(tmpdir(), 'paddock-proto-check-'));
  try {
    const fresh = join(scratch, 'gen');
    generate(fresh);
    const a = files(fresh).map((f) => relative(fresh, f)).sort();
    const b = files(target).map((f) => relative(target, f)).sort();
    const differs = a.join('\n') !== b.join('\n') || a.some((f) => !readFileSync(join(fresh, f)).equals(readFileSync(join(target, f))));
    if (differs) {
      console.error('src/gen is stale: run `pnpm --filter @paddock/proto generate` and commit the result');
      process.exit(1);
    }
    console.log('src/gen matches proto/');
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
} else {
  generate(target);
  console.log('generated src/gen');
}
