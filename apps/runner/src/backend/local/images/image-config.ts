import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { ImagePullError } from './pull-error';

/** The part of an OCI image configuration that decides how its container starts. */
const OciConfigSchema = z.object({
  architecture: z.string().optional(),
  os: z.string().optional(),
  config: z
    .object({
      User: z.string().optional(),
      Env: z.array(z.string()).nullish(),
      Entrypoint: z.array(z.string()).nullish(),
      Cmd: z.array(z.string()).nullish(),
      WorkingDir: z.string().optional(),
    })
    .nullish(),
});

/** How the runner starts a pulled image (stored beside its root filesystem). */
export const RunConfigSchema = z.strictObject({
  entrypoint: z.array(z.string()),
  cmd: z.array(z.string()),
  env: z.record(z.string(), z.string()),
  workingDir: z.string(),
  /** The image's `User` as written (`""`, `1000`, `app:app`...). */
  user: z.string(),
});
export type RunConfig = z.infer<typeof RunConfigSchema>;

export function parseRunConfig(body: Buffer): RunConfig {
  const r = OciConfigSchema.safeParse(JSON.parse(body.toString('utf8')));
  if (!r.success) throw new ImagePullError('IMAGE_PULL_FAILED', `the image configuration is not an OCI image config: ${r.error.issues[0]?.message ?? ''}`);
  const c = r.data.config ?? {};
  const env: Record<string, string> = {};
  for (const kv of c.Env ?? []) {
    const eq = kv.indexOf('=');
    if (eq > 0) env[kv.slice(0, eq)] = kv.slice(eq + 1);
  }
  return { entrypoint: c.Entrypoint ?? [], cmd: c.Cmd ?? [], env, workingDir: c.WorkingDir ?? '', user: c.User ?? '' };
}

/** A uid/gid inside the sandbox's user namespace (mapped to the runner's unprivileged host uid). */
export interface SandboxUser {
  uid: number;
  gid: number;
}

function lookup(root: string, file: string, name: string): string[] | undefined {
  let text: string;
  try {
    text = readFileSync(join(root, 'etc', file), 'utf8');
  } catch {
    return undefined;
  }
  return text
    .split('\n')
    .map((l) => l.split(':'))
    .find((f) => f[0] === name);
}

const NUMBER = /^\d+$/;

/**
 * The image's `User` resolved against its own /etc/passwd and /etc/group. Root (or no user) is
 * undefined: the sandbox then runs as the runner's unprivileged uid, so root in an image never
 * means root anywhere, not even inside the sandbox's namespace.
 */
export function resolveImageUser(root: string, user: string): SandboxUser | undefined {
  if (user === '') return undefined;
  const [u = '', g] = user.split(':', 2);
  let uid: number;
  let gid: number | undefined;
  if (NUMBER.test(u)) {
    uid = Number(u);
    const byUid = lookupByUid(root, uid);
    gid = byUid ? Number(byUid[3]) : undefined;
  } else {
    const entry = lookup(root, 'passwd', u);
    if (!entry || !NUMBER.test(entry[2] ?? '')) throw new ImagePullError('IMAGE_PULL_FAILED', `the image's user ${JSON.stringify(u)} is not in its /etc/passwd`);
    uid = Number(entry[2]);
    gid = Number(entry[3]);
  }
  if (g !== undefined) {
    if (NUMBER.test(g)) gid = Number(g);
    else {
      const entry = lookup(root, 'group', g);
      if (!entry || !NUMBER.test(entry[2] ?? '')) throw new ImagePullError('IMAGE_PULL_FAILED', `the image's group ${JSON.stringify(g)} is not in its /etc/group`);
      gid = Number(entry[2]);
    }
  }
  if (uid === 0) return undefined;
  return { uid, gid: gid ?? uid };
}

function lookupByUid(root: string, uid: number): string[] | undefined {
  try {
    return readFileSync(join(root, 'etc', 'passwd'), 'utf8')
      .split('\n')
      .map((l) => l.split(':'))
      .find((f) => f[2] === String(uid));
  } catch {
    return undefined;
  }
}
