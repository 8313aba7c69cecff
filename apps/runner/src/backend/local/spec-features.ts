import type { SpecFeature } from '@paddock/contracts';

/**
 * The spec features the local (bubblewrap) backend honours, beyond the one-container baseline.
 * Every feature missing here is refused by name when a spec uses it (the policy engine checks the
 * runner's `specFeatures`), so adding a feature here is what turns it on: only once the backend
 * really applies it, with the every-field test (`test/unit/every-spec-field.spec.ts`) showing it.
 */
export const LOCAL_SPEC_FEATURES: readonly SpecFeature[] = [
  // The root is remounted read-only (`--remount-ro /`) for every sandbox.
  'securityContext.readOnlyRootFilesystem',
  // Every capability is dropped (`--cap-drop ALL`), so any drop list is already satisfied.
  'securityContext.capabilitiesDrop',
  // The ids inside the sandbox's user namespace (bwrap --uid/--gid; the host uid stays 65534), and
  // NET_BIND_SERVICE; other capabilities are refused at create (security-context.ts).
  'securityContext.runAsUser',
  'securityContext.runAsGroup',
  'securityContext.capabilitiesAdd',
  // Sidecars and init containers: each its own bwrap in the sandbox's cgroups and network namespace.
  'containers.multiple',
  'initContainers',
  // Scratch volumes are size-capped tmpfs mounts, shared by the containers that mount them.
  'volumes.scratch',
  'volumeMounts',
  'volumeMounts.readOnly',
  'volumeMounts.subPath',
  // Public services are relayed by the supervisor into the sandbox's network namespace.
  'services',
  'startupProbe',
  // The sandbox's own disk (volume `workspace`) restores from a file-system snapshot; other
  // volumes' restores are refused at create by name.
  'volumes.restoreFromSnapshot',
  // Secret values the gateway resolved become env vars of the sandbox (`secretEnvNames`).
  'secretStores',
  // Registry logins the gateway resolved from the secret stores (`imagePullDockerConfig`) are
  // used for this sandbox's pull, in memory only, over the runner's own auth file.
  'imagePullCredentials',
];
