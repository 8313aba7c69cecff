import { z } from 'zod';
import { WarmPoolsSchema } from './warm-pools';

const name = z.string().min(1);

/**
 * The runner's config file, one schema for its writer and its reader: in Kubernetes a ConfigMap
 * the controller renders and mounts, locally a file (mode 0600) the controller's local driver
 * writes beside the runner's NATS credentials. The runner watches it; a policy edit only rewrites
 * it. Every field may be left out so that a runner can start before the controller has written
 * anything (it then applies the platform default policy). Unknown keys are refused by name: a
 * key the reader does not know is a writer's mistake, never something to drop silently.
 *
 * Identity and NATS settings set in the runner's environment win over the file's (a developer
 * may override one field); the local driver passes them here only, so a runner's environment,
 * which its children could inherit, carries neither its NATS server nor its credentials' path.
 */
export const RunnerConfigFileSchema = z.strictObject({
  runnerId: name.optional(),
  /** Runner release revision the controller rolled out. */
  revision: z.number().int().nonnegative().default(0),
  /**
   * The policy document; absent or null = the platform default policy. Checked by
   * `@paddock/policy`'s validatePolicy (the one validator every plane uses), not here.
   */
  policy: z.unknown().optional(),
  policyEtag: name.optional(),
  /** The runner's warm pools (absent = none); each template is resolved against `policy`. */
  warmPools: WarmPoolsSchema.optional(),
  identity: z
    .strictObject({
      organizationId: name.optional(),
      clusterId: name.optional(),
      zone: name.optional(),
      runnerGroupId: name.optional(),
    })
    .default({}),
  /** Read when the runner starts (the credentials file itself is re-read at every reconnect). */
  nats: z
    .strictObject({
      url: name.optional(),
      /** Path of the runner's `.creds` file: readable by the runner alone (0600), outside every sandbox's view. */
      credsFile: name.optional(),
    })
    .default({}),
});
export type RunnerConfigFile = z.infer<typeof RunnerConfigFileSchema>;
/** What a writer produces (defaults not yet applied). */
export type RunnerConfigFileInput = z.input<typeof RunnerConfigFileSchema>;
