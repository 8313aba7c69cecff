import { podVolumeNameOf } from './kubernetes/pod-parts';
import type { LaunchSpec } from './sandbox-backend';

/** A container name Kubernetes accepts (a DNS-1123 label). */
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/**
 * What of a launch's pod parts the Kubernetes pod cannot carry as written, by name (empty =
 * nothing): container names that are not DNS labels or that take the sandbox container's own
 * name, volumes whose prefixed name is not one, and registered volumes (never mounted as scratch).
 */
export function podFeaturesRefused(spec: LaunchSpec, sandboxContainerName: string): string[] {
  const out: string[] = [];
  for (const [list, kind] of [
    [spec.sidecars ?? [], 'containers'],
    [spec.initContainers ?? [], 'initContainers'],
  ] as const) {
    for (const c of list) {
      if (!DNS_LABEL.test(c.name) || c.name === sandboxContainerName) {
        out.push(`${kind} name ${JSON.stringify(c.name)} (a Kubernetes container name is a DNS label other than ${JSON.stringify(sandboxContainerName)})`);
      }
    }
  }
  for (const v of spec.volumes ?? []) {
    if (v.volumeId) out.push(`volumes ${JSON.stringify(v.name)}: registered volumes`);
    else if (!DNS_LABEL.test(podVolumeNameOf(v.name))) out.push(`volumes name ${JSON.stringify(v.name)} (not a DNS label)`);
  }
  return out;
}
