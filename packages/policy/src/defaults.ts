import type { Policy } from '@paddock/contracts';

/**
 * The platform's default policy, used when a runner has none (`policy: null`: the seeds say the
 * platform supplies one when a runner connects without a policy). Deliberately modest:
 * - 1 CPU / 1Gi for a container that declares no resources;
 * - no privileged containers (the security allowlists are fail-closed anyway);
 * - annotations under `paddock.dev/` are reserved for the platform.
 * Everything else is open (no registry, network or instance restriction), like `{}`.
 */
export const DEFAULT_POLICY: Policy = Object.freeze({
  displayName: 'Paddock platform default',
  constraints: {
    resources: { defaultCpu: '1', defaultMemory: '1Gi' },
    security: { allowPrivileged: false },
    metadata: { deniedAnnotationPrefixes: ['paddock.dev/'] },
  },
});

/**
 * Runtime defaults: the lowest layer (`runtime defaults < policy.base < sandbox spec`), used when
 * neither the request nor the policy supplies a value. A value taken from here is reported with
 * source `platform`.
 */
export const PLATFORM_DEFAULTS = Object.freeze({
  cpuMillis: 1000,
  memoryBytes: 1024 ** 3,
  image: 'python:3.12-slim',
  scratchSizeBytes: 10 * 1024 ** 3,
  seccompProfile: 'RuntimeDefault',
  containerName: 'main',
});

/** Limits on a request's size, so one request cannot make resolution expensive. */
export const SPEC_LIMITS = Object.freeze({
  maxContainers: 64,
  maxVolumes: 128,
  maxRules: 512,
  maxRunnerIds: 100,
  maxRunnerIdsBytes: 64 * 1024,
  maxAnnotations: 1024,
});
