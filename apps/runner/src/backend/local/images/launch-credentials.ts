import type { LaunchSpec } from '../../sandbox-backend';
import { parseRegistryAuths } from './auth-file';
import { ImagePullError } from './pull-error';
import type { RegistryCredential } from './registry-client';

/**
 * The pull credentials a create delivered (`imagePullDockerConfig`, resolved by the gateway from
 * the organisation's secret store), for the registries the spec names them for. They live only in
 * memory for the pull: never written under the state directory, never part of an event or a log.
 */
export function launchPullCredentials(spec: Pick<LaunchSpec, 'imagePullRegistries' | 'imagePullDockerConfig'>): Record<string, RegistryCredential> | undefined {
  const registries = spec.imagePullRegistries ?? [];
  if (registries.length === 0) return undefined;
  if (!spec.imagePullDockerConfig) {
    throw new ImagePullError('IMAGE_PULL_UNAUTHORIZED', `imagePullCredentials for ${registries.join(', ')} were not delivered with the create`);
  }
  let auths: Record<string, RegistryCredential>;
  try {
    auths = parseRegistryAuths(spec.imagePullDockerConfig, 'imagePullDockerConfig');
  } catch (e) {
    throw new ImagePullError('IMAGE_PULL_FAILED', (e as Error).message);
  }
  const out: Record<string, RegistryCredential> = {};
  for (const r of registries) {
    const cred = auths[r];
    if (!cred) throw new ImagePullError('IMAGE_PULL_UNAUTHORIZED', `imagePullCredentials for ${r} were resolved without a login for it`);
    out[r] = cred;
  }
  return out;
}

/** The spec the sandbox runs on once its image is in: the delivered credentials are not kept with it. */
export function withoutPullCredentials(spec: LaunchSpec): LaunchSpec {
  const { imagePullDockerConfig: _used, ...rest } = spec;
  return rest;
}
