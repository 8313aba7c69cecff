import type { LaunchSpec } from './sandbox-backend';

/** The launch fields a backend that runs a lone container cannot honour, by name (empty = none used). */
export function podFeaturesUsed(spec: LaunchSpec): string[] {
  return [
    ...((spec.sidecars?.length ?? 0) > 0 ? ['containers (more than one)'] : []),
    ...((spec.initContainers?.length ?? 0) > 0 ? ['initContainers'] : []),
    ...((spec.volumes?.length ?? 0) > 0 ? ['volumes'] : []),
    ...((spec.volumeMounts?.length ?? 0) > 0 ? ['containers[].volumeMounts'] : []),
    ...(spec.startupProbe ? ['containers[].startupProbe'] : []),
  ];
}
