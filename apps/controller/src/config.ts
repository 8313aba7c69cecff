import { join } from 'node:path';
import { requireEnvironment } from '@paddock/kit';
import { z } from 'zod';

const Env = z.object({
  /**
   * This cluster's own database role (`node apps/control-plane/dist/db-access.js controller
   * --cluster NAME` prints it): it reads this cluster's runners and log positions and writes nothing.
   */
  DATABASE_URL: z.string().default('postgres://postgres@127.0.0.1:5432/paddock'),
  NATS_URL: z.string().default('nats://127.0.0.1:4222'),
  /**
   * Path of the controller's NATS credentials (`.creds`, mode 0600; issued by an admin with
   * `POST /v1/clusters/{cluster}/natsCredentials`). With it, the controller obtains each runner's
   * credentials from the control plane and delivers them as a file; unset = NATS without auth.
   */
  NATS_CREDS: z.string().min(1).optional(),
  PADDOCK_CONTROL_PLANE_URL: z.string().default('http://127.0.0.1:8080'),
  /** An admin token of the organization that owns this cluster. */
  PADDOCK_API_KEY: z.string().min(1, 'PADDOCK_API_KEY (an admin token of the cluster owner) is required'),
  PADDOCK_CONTROLLER_DRIVER: z.enum(['local', 'kubernetes']).default('local'),
  PADDOCK_CLUSTER_NAME: z.string().default('local'),
  PADDOCK_ZONE: z.string().default('local'),
  PADDOCK_CONTROLLER_ID: z.string().optional(),
  PADDOCK_CONTROLLER_STATE_DIR: z.string().default(join(process.cwd(), '.paddock', 'controller')),
  /** Runner entry point for the local driver. */
  PADDOCK_RUNNER_ENTRY: z.string().default(join(__dirname, '..', '..', 'runner', 'dist', 'main.js')),
  /** When set, declare a runner with this id on the cluster if none exists (pnpm start). */
  PADDOCK_DECLARE_DEFAULT_RUNNER: z.string().optional(),
  /**
   * The policy (JSON) that runner is declared with; unset = none (the platform default). Only
   * applied when the runner is created: an existing runner keeps the policy its admin gave it.
   */
  PADDOCK_DECLARE_DEFAULT_RUNNER_POLICY: z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v === '') return undefined;
      try {
        const parsed: unknown = JSON.parse(v);
        if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
      } catch {
        // reported below
      }
      ctx.addIssue({ code: 'custom', message: 'must be a JSON object (a runner policy)' });
      return z.NEVER;
    }),
  /** Namespace of the leader-election Lease (Kubernetes driver). */
  PADDOCK_LEASE_NAMESPACE: z.string().default('paddock-system'),
  /** Lease duration and renew period (Kubernetes driver): a paused leader is deposed after the duration. */
  PADDOCK_LEASE_DURATION_S: z.coerce.number().int().positive().default(15),
  PADDOCK_LEASE_RENEW_MS: z.coerce.number().int().positive().default(2_000),
  /**
   * Local driver: on SIGTERM/SIGINT, also stop the runners this controller started and their
   * sandboxes (`pnpm start` sets it, so Ctrl-C stops everything). Off by default: a controller
   * restarted on its own adopts the runners it left running.
   */
  PADDOCK_CONTROLLER_STOP_RUNNERS_ON_EXIT: z.enum(['true', 'false']).default('false').transform((v) => v === 'true'),
  /** Full resync period: events are hints, this is the safety net. */
  PADDOCK_RESYNC_MS: z.coerce.number().int().positive().default(10_000),
});
export type ControllerEnv = z.infer<typeof Env>;

export function parseEnv(env: NodeJS.ProcessEnv): ControllerEnv {
  return requireEnvironment(Env, env, 'controller');
}
