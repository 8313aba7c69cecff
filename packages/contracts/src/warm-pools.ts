import { z } from 'zod';

/** Pool names: DNS labels, so they read well in status, metrics and sandbox labels. */
export const WARM_POOL_NAME_PATTERN = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
/** A runner keeps at most this many warm sandboxes per pool (its capacity bounds it further). */
export const WARM_POOL_MAX_SIZE = 500;
/** At most this many pools per runner: each pool is a template every create is compared with. */
export const WARM_POOLS_MAX = 16;

/**
 * One warm pool of a runner: `size` sandboxes started from `template` and kept idle (they have
 * never run user code) so that a create whose resolved spec matches the template takes one instead
 * of starting cold. `template` is a partial sandbox spec (image, resources, env, runtime class,
 * network...), checked by the policy engine exactly as a create's spec is (structure and policy in
 * one pass), so it stays raw here.
 */
export const WarmPoolSchema = z.strictObject({
  name: z.string().regex(WARM_POOL_NAME_PATTERN, 'must be a DNS label (lowercase letters, digits and dashes, at most 63)'),
  size: z.number().int().min(0).max(WARM_POOL_MAX_SIZE),
  template: z.record(z.string(), z.unknown()).default({}),
});
export type WarmPool = z.infer<typeof WarmPoolSchema>;
export type WarmPoolInput = z.input<typeof WarmPoolSchema>;

/** A runner's pools: names unique, at most `WARM_POOLS_MAX`. */
export const WarmPoolsSchema = z
  .array(WarmPoolSchema)
  .max(WARM_POOLS_MAX)
  .superRefine((pools, ctx) => {
    const seen = new Set<string>();
    pools.forEach((p, i) => {
      if (seen.has(p.name)) ctx.addIssue({ code: 'custom', path: [i, 'name'], message: `pool name ${JSON.stringify(p.name)} is used twice` });
      seen.add(p.name);
    });
  });

/**
 * What a runner reports of each pool in its heartbeat (and the control plane shows on the runner):
 * `size` asked for, `ready` started and idle now. `error` says why a pool cannot fill (its
 * template refused by the runner's policy or capabilities, or the runner at capacity).
 */
export const WarmPoolStatusSchema = z.object({
  name: z.string(),
  size: z.number().int().nonnegative(),
  ready: z.number().int().nonnegative(),
  error: z.string().optional(),
  /**
   * The pool's template as `@paddock/policy`'s `warmPoolKey` states it (resolved against the
   * runner's policy): the gateway prefers a runner with a ready pool whose key its create matches.
   */
  key: z.string().optional(),
});
export type WarmPoolStatus = z.infer<typeof WarmPoolStatusSchema>;

/** Label a backend carries on every warm sandbox: the pool it belongs to (recovery reaps them). */
export const WARM_POOL_LABEL = 'paddock.dev/warm-pool';
