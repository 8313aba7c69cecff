// The container images this repository builds (`pnpm images`), and the tags each gets.
//
// Tags come from what references them, so nothing can name an image that is not built:
// the platform images get `dev` and every tag an overlay pins (infra/k8s/overlays/*), the runner
// gets `dev` and every version the control plane seeds as a release (its migration's seed JSON,
// the list the control plane offers on its channels). Every tag of one image is the same build
// of this checkout.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';

/** Apps that run as containers; each has `apps/<app>/src/main.ts`, built to `dist/main.js`. */
export const IMAGE_APPS = ['control-plane', 'gateway', 'controller', 'runner'] as const;
export type ImageApp = (typeof IMAGE_APPS)[number];

export const DOCKERFILE = 'infra/docker/Dockerfile';
export const DEV_TAG = 'dev';

export interface ImageBuild {
  app: ImageApp;
  /** Repository name, e.g. `paddock/gateway`. */
  image: string;
  tags: string[];
  dockerfile: string;
  /** `docker build` arguments, context the repository root. */
  buildArgs: Record<string, string>;
}

interface SeededRelease {
  channel: string;
  version: string;
  image: string;
}

const MIGRATIONS_DIR = 'apps/control-plane/src/db/migrations';

/** Every release the control plane's migrations seed (their `*.seed.json`), in file order. */
export function seededRunnerReleases(repoRoot: string): SeededRelease[] {
  const dir = join(repoRoot, MIGRATIONS_DIR);
  return readdirSync(dir)
    .filter((f) => f.endsWith('.seed.json'))
    .sort()
    .flatMap((f) => JSON.parse(readFileSync(join(dir, f), 'utf8')) as SeededRelease[]);
}

/** Tags each image gets from the `images:` of every overlay under infra/k8s/overlays. */
function overlayTags(repoRoot: string): Map<string, Set<string>> {
  const tags = new Map<string, Set<string>>();
  const overlays = join(repoRoot, 'infra', 'k8s', 'overlays');
  for (const overlay of readdirSync(overlays)) {
    const file = join(overlays, overlay, 'kustomization.yaml');
    if (!existsSync(file)) continue;
    const k = parse(readFileSync(file, 'utf8')) as { images?: { name: string; newTag?: string }[] };
    for (const { name, newTag } of k.images ?? []) {
      if (!newTag) continue;
      tags.set(name, (tags.get(name) ?? new Set()).add(newTag));
    }
  }
  return tags;
}

function splitImage(ref: string): { name: string; tag: string } {
  const i = ref.lastIndexOf(':');
  if (i <= 0) throw new Error(`release image ${JSON.stringify(ref)} has no tag`);
  return { name: ref.slice(0, i), tag: ref.slice(i + 1) };
}

export function imagePlan(repoRoot: string): ImageBuild[] {
  const fromOverlays = overlayTags(repoRoot);
  const runnerTags = new Set<string>();
  for (const r of seededRunnerReleases(repoRoot)) {
    const { name, tag } = splitImage(r.image);
    if (name !== 'paddock/runner')
      {throw new Error(`a seeded release names ${r.image}: only paddock/runner is built here`);}
    runnerTags.add(tag);
  }
  return IMAGE_APPS.map((app) => {
    const image = `paddock/${app}`;
    const tags = new Set([
      DEV_TAG,
      ...(fromOverlays.get(image) ?? []),
      ...(app === 'runner' ? runnerTags : []),
    ]);
    return { app, image, tags: [...tags], dockerfile: DOCKERFILE, buildArgs: { APP: app } };
  });
}

/** The `docker build` command line of one image: one build, every tag. */
export function dockerBuildArgs(b: ImageBuild): string[] {
  return [
    'build',
    '-f',
    b.dockerfile,
    ...Object.entries(b.buildArgs).flatMap(([k, v]) => ['--build-arg', `${k}=${v}`]),
    ...b.tags.flatMap((t) => ['-t', `${b.image}:${t}`]),
    '.',
  ];
}
