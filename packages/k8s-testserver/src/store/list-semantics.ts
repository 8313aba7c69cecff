import { isRecord } from '../types';

/**
 * Which lists merge by key, as the Kubernetes OpenAPI declares with `x-kubernetes-list-map-keys`
 * / `patchMergeKey`. The server only knows field names, not full schema paths: close enough for
 * the kinds it serves (a `ports` item carries `containerPort` in pods and `port` in services).
 */
const KEYED_LISTS: Record<string, string[]> = {
  containers: ['name'],
  initContainers: ['name'],
  ephemeralContainers: ['name'],
  env: ['name'],
  volumes: ['name'],
  volumeMounts: ['mountPath'],
  volumeDevices: ['devicePath'],
  imagePullSecrets: ['name'],
  conditions: ['type'],
  ownerReferences: ['uid'],
  hostAliases: ['ip'],
  topologySpreadConstraints: ['topologyKey', 'whenUnsatisfiable'],
  resourceClaims: ['name'],
  containerStatuses: ['name'],
};

/** Lists of scalars with set semantics (`x-kubernetes-list-type: set`). */
const SET_LISTS = new Set(['finalizers']);

export type ListKind = { kind: 'map'; keyOf: (item: unknown) => Record<string, unknown> | undefined } | { kind: 'set' } | { kind: 'atomic' };

export function listKind(field: string, items: readonly unknown[]): ListKind {
  if (SET_LISTS.has(field)) return { kind: 'set' };
  if (field === 'ports') {
    const first = items.find(isRecord);
    const portField = first && 'port' in first && !('containerPort' in first) ? 'port' : 'containerPort';
    return {
      kind: 'map',
      keyOf: (item) => (isRecord(item) && item[portField] !== undefined ? { [portField]: item[portField], protocol: item.protocol ?? 'TCP' } : undefined),
    };
  }
  const keys = KEYED_LISTS[field];
  if (!keys) return { kind: 'atomic' };
  return {
    kind: 'map',
    keyOf: (item) => {
      if (!isRecord(item)) return undefined;
      const key: Record<string, unknown> = {};
      for (const k of [...keys].sort()) {
        if (item[k] === undefined) return undefined;
        key[k] = item[k];
      }
      return key;
    },
  };
}

export function sameKey(a: Record<string, unknown> | undefined, b: Record<string, unknown> | undefined): boolean {
  return a !== undefined && b !== undefined && JSON.stringify(a) === JSON.stringify(b);
}

export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((v, i) => deepEqual(v, b[i]));
  if (isRecord(a) && isRecord(b)) {
    const ka = Object.keys(a).filter((k) => a[k] !== undefined);
    const kb = Object.keys(b).filter((k) => b[k] !== undefined);
    return ka.length === kb.length && ka.every((k) => deepEqual(a[k], b[k]));
  }
  return false;
}
