import type { SpecFeature } from '@paddock/contracts';

/**
 * The one map from a sandbox request's fields to the spec features (`SPEC_FEATURES`) a backend
 * must honour for them. The runner's own resolution and the gateway's placement and `:explain`
 * both reach it through `resolveSandboxSpec`, so a field is refused by the same rule everywhere.
 *
 * A field "uses" a feature when it asks the backend for something beyond the baseline every
 * backend gives: a value that asks for nothing (`privileged: false`, the platform's own seccomp
 * profile, an empty list) uses none. Each use names the exact field, so a refusal reads
 * `containers[1]: ...` or `containers[0].startupProbe: ...`.
 *
 * Reads the request as written (already shape-checked by the reader; anything malformed is
 * skipped here, never thrown on).
 */

export interface SpecFeatureUse {
  feature: SpecFeature;
  /** The field that uses it, as violations name fields (`containers[0].volumeMounts[1].subPath`). */
  field: string;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const objects = (v: unknown): Obj[] => (Array.isArray(v) ? v.filter(isObj) : []);
const nonEmptyList = (v: unknown): boolean => Array.isArray(v) && v.length > 0;
const nonEmptyMap = (v: unknown): boolean => isObj(v) && Object.keys(v).length > 0;

/** The seccomp profile every backend applies already; asking for it asks for nothing. */
const PLATFORM_SECCOMP = 'RuntimeDefault';

/**
 * Every feature use in `spec`. `primaryContainer` is the primary the reader resolved (so the
 * other containers are the extra ones).
 */
export function specFeatureUses(spec: Obj, primaryContainer: string): SpecFeatureUse[] {
  const uses: SpecFeatureUse[] = [];
  const use = (feature: SpecFeature, field: string): void => {
    uses.push({ feature, field });
  };
  const containers = objects(spec.containers);
  if (containers.length > 1) {
    let primary = containers.findIndex((c) => c.name === primaryContainer);
    if (primary < 0) primary = Math.max(0, containers.findIndex((c) => c.primary === true));
    containers.forEach((c, i) => {
      if (i !== primary) use('containers.multiple', `containers[${i}]`);
      if (c.primary !== undefined) use('containers.multiple', `containers[${i}].primary`);
    });
    if (spec.primaryContainer !== undefined) use('containers.multiple', 'primaryContainer');
  }
  containers.forEach((c, i) => containerUses(c, `containers[${i}]`, use));
  objects(spec.initContainers).forEach((c, i) => {
    use('initContainers', `initContainers[${i}]`);
    containerUses(c, `initContainers[${i}]`, use);
  });
  objects(spec.volumes).forEach((v, i) => {
    const at = `volumes[${i}]`;
    if (v.scratch !== undefined) use('volumes.scratch', at);
    if (v.volumeId !== undefined) use('volumes.registered', `${at}.volumeId`);
    if (isObj(v.scratch) && v.scratch.restoreFromSnapshotId !== undefined) {
      use('volumes.restoreFromSnapshot', `${at}.scratch.restoreFromSnapshotId`);
    }
  });
  if (Array.isArray(spec.services)) spec.services.forEach((_, i) => use('services', `services[${i}]`));
  if (nonEmptyMap(spec.annotations)) use('annotations', 'annotations');
  if (spec.objectStorageAccess !== undefined) use('objectStorageAccess', 'objectStorageAccess');
  if (nonEmptyList(spec.networkIds)) use('networkIds', 'networkIds');
  if (typeof spec.instanceType === 'string' && spec.instanceType !== '') use('instanceType', 'instanceType');
  const dns = isObj(spec.network) ? spec.network.dnsEgress : undefined;
  if (dns !== undefined && dns !== 'DNS_EGRESS_MODE_UNSPECIFIED') use('network.dnsEgress', 'network.dnsEgress');
  return uses;
}

function containerUses(c: Obj, at: string, use: (f: SpecFeature, field: string) => void): void {
  objects(c.volumeMounts).forEach((m, j) => {
    const mp = `${at}.volumeMounts[${j}]`;
    use('volumeMounts', mp);
    if (m.readOnly === true) use('volumeMounts.readOnly', `${mp}.readOnly`);
    if (typeof m.subPath === 'string' && m.subPath !== '') use('volumeMounts.subPath', `${mp}.subPath`);
  });
  if (c.startupProbe !== undefined) use('startupProbe', `${at}.startupProbe`);
  if (nonEmptyList(c.secretStores)) use('secretStores', `${at}.secretStores`);
  if (c.imagePullCredentials !== undefined) use('imagePullCredentials', `${at}.imagePullCredentials`);
  const sc = c.securityContext;
  if (isObj(sc)) {
    const sp = `${at}.securityContext`;
    if (sc.runAsUser !== undefined) use('securityContext.runAsUser', `${sp}.runAsUser`);
    if (sc.runAsGroup !== undefined) use('securityContext.runAsGroup', `${sp}.runAsGroup`);
    if (sc.readOnlyRootFilesystem === true) use('securityContext.readOnlyRootFilesystem', `${sp}.readOnlyRootFilesystem`);
    if (sc.readOnlyRootFilesystem === false) use('securityContext.writableRootFilesystem', `${sp}.readOnlyRootFilesystem`);
    if (sc.allowPrivilegeEscalation === true) use('securityContext.allowPrivilegeEscalation', `${sp}.allowPrivilegeEscalation`);
    if (nonEmptyList(sc.capabilitiesAdd)) use('securityContext.capabilitiesAdd', `${sp}.capabilitiesAdd`);
    if (nonEmptyList(sc.capabilitiesDrop)) use('securityContext.capabilitiesDrop', `${sp}.capabilitiesDrop`);
    if (typeof sc.seccompProfile === 'string' && sc.seccompProfile !== '' && sc.seccompProfile !== PLATFORM_SECCOMP) {
      use('securityContext.seccompProfile', `${sp}.seccompProfile`);
    }
  }
  gpuMemoryUse(c.resources, `${at}.resources`, use);
  if (isObj(c.resourceRequirements)) {
    gpuMemoryUse(c.resourceRequirements.requests, `${at}.resourceRequirements.requests`, use);
    gpuMemoryUse(c.resourceRequirements.limits, `${at}.resourceRequirements.limits`, use);
  }
}

function gpuMemoryUse(res: unknown, at: string, use: (f: SpecFeature, field: string) => void): void {
  if (isObj(res) && isObj(res.gpu) && res.gpu.memoryGb !== undefined) use('gpu.memoryGb', `${at}.gpu.memoryGb`);
}
