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

/** No feature honoured: every use is reported. */
const NONE: ReadonlySet<SpecFeature> = new Set();

/**
 * Every feature use in `spec`. `primaryContainer` is the primary the reader resolved (so the
 * other containers are the extra ones).
 */
export function specFeatureUses(spec: Obj, primaryContainer: string): SpecFeatureUse[] {
  const uses: SpecFeatureUse[] = [];
  collectFeatureUses(spec, primaryContainer, NONE, uses);
  return uses;
}

/**
 * The uses of features outside `honoured`, appended to `uses` in the order
 * {@link specFeatureUses} lists them. A field's name is built only for a feature that is not
 * honoured: resolution runs this on every create, and most runners honour most of the fields a
 * request uses.
 */
export function collectFeatureUses(
  spec: Obj,
  primaryContainer: string,
  honoured: ReadonlySet<SpecFeature>,
  uses: SpecFeatureUse[],
): void {
  const h = honoured;
  const containers = objects(spec.containers);
  if (containers.length > 1 && !h.has('containers.multiple')) {
    let primary = containers.findIndex((c) => c.name === primaryContainer);
    if (primary < 0) primary = Math.max(0, containers.findIndex((c) => c.primary === true));
    for (let i = 0; i < containers.length; i++) {
      if (i !== primary) uses.push({ feature: 'containers.multiple', field: `containers[${i}]` });
      if ((containers[i] as Obj).primary !== undefined) {
        uses.push({ feature: 'containers.multiple', field: `containers[${i}].primary` });
      }
    }
    if (spec.primaryContainer !== undefined) {
      uses.push({ feature: 'containers.multiple', field: 'primaryContainer' });
    }
  }
  for (let i = 0; i < containers.length; i++) {
    containerUses(containers[i] as Obj, 'containers', i, h, uses);
  }
  const inits = objects(spec.initContainers);
  for (let i = 0; i < inits.length; i++) {
    if (!h.has('initContainers')) uses.push({ feature: 'initContainers', field: `initContainers[${i}]` });
    containerUses(inits[i] as Obj, 'initContainers', i, h, uses);
  }
  const volumes = objects(spec.volumes);
  for (let i = 0; i < volumes.length; i++) {
    const v = volumes[i] as Obj;
    if (v.scratch !== undefined && !h.has('volumes.scratch')) {
      uses.push({ feature: 'volumes.scratch', field: `volumes[${i}]` });
    }
    if (v.volumeId !== undefined && !h.has('volumes.registered')) {
      uses.push({ feature: 'volumes.registered', field: `volumes[${i}].volumeId` });
    }
    if (
      isObj(v.scratch) &&
      v.scratch.restoreFromSnapshotId !== undefined &&
      !h.has('volumes.restoreFromSnapshot')
    ) {
      uses.push({
        feature: 'volumes.restoreFromSnapshot',
        field: `volumes[${i}].scratch.restoreFromSnapshotId`,
      });
    }
  }
  if (Array.isArray(spec.services) && !h.has('services')) {
    for (let i = 0; i < spec.services.length; i++) uses.push({ feature: 'services', field: `services[${i}]` });
  }
  if (nonEmptyMap(spec.annotations) && !h.has('annotations')) {
    uses.push({ feature: 'annotations', field: 'annotations' });
  }
  if (spec.objectStorageAccess !== undefined && !h.has('objectStorageAccess')) {
    uses.push({ feature: 'objectStorageAccess', field: 'objectStorageAccess' });
  }
  if (nonEmptyList(spec.networkIds) && !h.has('networkIds')) {
    uses.push({ feature: 'networkIds', field: 'networkIds' });
  }
  if (typeof spec.instanceType === 'string' && spec.instanceType !== '' && !h.has('instanceType')) {
    uses.push({ feature: 'instanceType', field: 'instanceType' });
  }
  const dns = isObj(spec.network) ? spec.network.dnsEgress : undefined;
  if (dns !== undefined && dns !== 'DNS_EGRESS_MODE_UNSPECIFIED' && !h.has('network.dnsEgress')) {
    uses.push({ feature: 'network.dnsEgress', field: 'network.dnsEgress' });
  }
}

/** One container's uses; `list[i]` is its place, spelled out only for a use that is reported. */
function containerUses(
  c: Obj,
  list: string,
  i: number,
  h: ReadonlySet<SpecFeature>,
  uses: SpecFeatureUse[],
): void {
  const mounts = objects(c.volumeMounts);
  for (let j = 0; j < mounts.length; j++) {
    const m = mounts[j] as Obj;
    if (!h.has('volumeMounts')) uses.push({ feature: 'volumeMounts', field: `${list}[${i}].volumeMounts[${j}]` });
    if (m.readOnly === true && !h.has('volumeMounts.readOnly')) {
      uses.push({ feature: 'volumeMounts.readOnly', field: `${list}[${i}].volumeMounts[${j}].readOnly` });
    }
    if (typeof m.subPath === 'string' && m.subPath !== '' && !h.has('volumeMounts.subPath')) {
      uses.push({ feature: 'volumeMounts.subPath', field: `${list}[${i}].volumeMounts[${j}].subPath` });
    }
  }
  if (c.startupProbe !== undefined && !h.has('startupProbe')) {
    uses.push({ feature: 'startupProbe', field: `${list}[${i}].startupProbe` });
  }
  if (nonEmptyList(c.secretStores) && !h.has('secretStores')) {
    uses.push({ feature: 'secretStores', field: `${list}[${i}].secretStores` });
  }
  if (c.imagePullCredentials !== undefined && !h.has('imagePullCredentials')) {
    uses.push({ feature: 'imagePullCredentials', field: `${list}[${i}].imagePullCredentials` });
  }
  const sc = c.securityContext;
  if (isObj(sc)) securityUses(sc, list, i, h, uses);
  gpuMemoryUse(c.resources, list, i, '.resources', h, uses);
  if (isObj(c.resourceRequirements)) {
    gpuMemoryUse(c.resourceRequirements.requests, list, i, '.resourceRequirements.requests', h, uses);
    gpuMemoryUse(c.resourceRequirements.limits, list, i, '.resourceRequirements.limits', h, uses);
  }
}

function securityUses(
  sc: Obj,
  list: string,
  i: number,
  h: ReadonlySet<SpecFeature>,
  uses: SpecFeatureUse[],
): void {
  if (sc.runAsUser !== undefined && !h.has('securityContext.runAsUser')) {
    scUse(uses, 'securityContext.runAsUser', list, i, 'runAsUser');
  }
  if (sc.runAsGroup !== undefined && !h.has('securityContext.runAsGroup')) {
    scUse(uses, 'securityContext.runAsGroup', list, i, 'runAsGroup');
  }
  if (sc.readOnlyRootFilesystem === true && !h.has('securityContext.readOnlyRootFilesystem')) {
    scUse(uses, 'securityContext.readOnlyRootFilesystem', list, i, 'readOnlyRootFilesystem');
  }
  if (sc.readOnlyRootFilesystem === false && !h.has('securityContext.writableRootFilesystem')) {
    scUse(uses, 'securityContext.writableRootFilesystem', list, i, 'readOnlyRootFilesystem');
  }
  if (sc.allowPrivilegeEscalation === true && !h.has('securityContext.allowPrivilegeEscalation')) {
    scUse(uses, 'securityContext.allowPrivilegeEscalation', list, i, 'allowPrivilegeEscalation');
  }
  if (nonEmptyList(sc.capabilitiesAdd) && !h.has('securityContext.capabilitiesAdd')) {
    scUse(uses, 'securityContext.capabilitiesAdd', list, i, 'capabilitiesAdd');
  }
  if (nonEmptyList(sc.capabilitiesDrop) && !h.has('securityContext.capabilitiesDrop')) {
    scUse(uses, 'securityContext.capabilitiesDrop', list, i, 'capabilitiesDrop');
  }
  if (
    typeof sc.seccompProfile === 'string' &&
    sc.seccompProfile !== '' &&
    sc.seccompProfile !== PLATFORM_SECCOMP &&
    !h.has('securityContext.seccompProfile')
  ) {
    scUse(uses, 'securityContext.seccompProfile', list, i, 'seccompProfile');
  }
}

function scUse(
  uses: SpecFeatureUse[],
  feature: SpecFeature,
  list: string,
  i: number,
  key: string,
): void {
  uses.push({ feature, field: `${list}[${i}].securityContext.${key}` });
}

function gpuMemoryUse(
  res: unknown,
  list: string,
  i: number,
  at: string,
  h: ReadonlySet<SpecFeature>,
  uses: SpecFeatureUse[],
): void {
  if (isObj(res) && isObj(res.gpu) && res.gpu.memoryGb !== undefined && !h.has('gpu.memoryGb')) {
    uses.push({ feature: 'gpu.memoryGb', field: `${list}[${i}]${at}.gpu.memoryGb` });
  }
}
