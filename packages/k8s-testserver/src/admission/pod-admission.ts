/** Admission the API server runs on pod writes: PodSecurity, RuntimeClass, ResourceQuota, ServiceAccount, immutability. */
import { forbidden, invalid } from '../store/errors';
import { deepEqual } from '../store/list-semantics';
import { mustFindByKind } from '../store/resources';
import type { AdmissionRequest, ObjectStore } from '../store/store';
import { isRecord, type KubeObject, type PodSpec, type Toleration } from '../types';
import { checkPodSecurity, podSecurityMessage, type PodSecurityLevel } from './pod-security';
import { formatQuantity, parseQuantity } from './quantity';

const isPod = (req: AdmissionRequest): boolean => req.resource.group === '' && req.resource.kind === 'Pod';
const podSpec = (o: KubeObject): PodSpec => (isRecord(o.spec) ? (o.spec as PodSpec) : { containers: [] });

export function podSecurityAdmission(store: ObjectStore) {
  const nsType = mustFindByKind('v1', 'Namespace');
  return (req: AdmissionRequest): void => {
    if (!isPod(req) || req.operation !== 'CREATE') return;
    const ns = store.peek(nsType, undefined, req.object.metadata.namespace ?? '');
    const labels = ns?.metadata.labels ?? {};
    const level = labels['pod-security.kubernetes.io/enforce'] as PodSecurityLevel | undefined;
    if (level !== 'baseline' && level !== 'restricted') return;
    const violations = checkPodSecurity(podSpec(req.object), level);
    if (violations.length === 0) return;
    const version = labels['pod-security.kubernetes.io/enforce-version'] ?? 'latest';
    throw forbidden(req.resource, req.object.metadata.name ?? '', podSecurityMessage(level, version, violations));
  };
}

/** RuntimeClass admission: the class must exist; its scheduling constraints are merged into the pod. */
export function runtimeClassAdmission(store: ObjectStore) {
  const rcType = mustFindByKind('node.k8s.io/v1', 'RuntimeClass');
  return (req: AdmissionRequest): void => {
    if (!isPod(req) || req.operation !== 'CREATE') return;
    const spec = podSpec(req.object);
    if (!spec.runtimeClassName) return;
    const rc = store.peek(rcType, undefined, spec.runtimeClassName);
    if (!rc) throw forbidden(req.resource, req.object.metadata.name ?? '', `pod rejected: RuntimeClass "${spec.runtimeClassName}" not found`);
    const scheduling = isRecord(rc.scheduling) ? rc.scheduling : {};
    if (isRecord(scheduling.nodeSelector)) {
      for (const [k, v] of Object.entries(scheduling.nodeSelector)) {
        const existing = spec.nodeSelector?.[k];
        if (existing !== undefined && existing !== v) {
          throw forbidden(req.resource, req.object.metadata.name ?? '', `pod rejected: conflict: runtimeClass.scheduling.nodeSelector[${k}] = ${String(v)}; pod.spec.nodeSelector[${k}] = ${existing}`);
        }
        spec.nodeSelector = { ...spec.nodeSelector, [k]: String(v) };
      }
    }
    if (Array.isArray(scheduling.tolerations)) {
      const tolerations = spec.tolerations ?? [];
      for (const t of scheduling.tolerations as Toleration[]) if (!tolerations.some((x) => deepEqual(x, t))) tolerations.push(t);
      spec.tolerations = tolerations;
    }
  };
}

/** Non-default service accounts must exist (the `default` one is created by the namespace controller). */
export function serviceAccountAdmission(store: ObjectStore) {
  const saType = mustFindByKind('v1', 'ServiceAccount');
  return (req: AdmissionRequest): void => {
    if (!isPod(req) || req.operation !== 'CREATE') return;
    const name = podSpec(req.object).serviceAccountName;
    if (!name || name === 'default') return;
    const ns = req.object.metadata.namespace ?? '';
    if (!store.peek(saType, ns, name)) {
      throw forbidden(req.resource, req.object.metadata.name ?? '', `error looking up service account ${ns}/${name}: serviceaccount "${name}" not found`);
    }
  };
}

const QUOTA_KEYS: Record<string, { field: 'requests' | 'limits'; resource: 'cpu' | 'memory' }> = {
  cpu: { field: 'requests', resource: 'cpu' },
  'requests.cpu': { field: 'requests', resource: 'cpu' },
  memory: { field: 'requests', resource: 'memory' },
  'requests.memory': { field: 'requests', resource: 'memory' },
  'limits.cpu': { field: 'limits', resource: 'cpu' },
  'limits.memory': { field: 'limits', resource: 'memory' },
};

/** What a pod counts against each quota key. */
export function podUsage(spec: PodSpec, key: string): number | undefined {
  if (key === 'pods' || key === 'count/pods') return 1;
  const q = QUOTA_KEYS[key];
  if (!q) return 0;
  let total = 0;
  for (const c of spec.containers ?? []) {
    const v = c.resources?.[q.field]?.[q.resource] ?? (q.field === 'requests' ? c.resources?.limits?.[q.resource] : undefined);
    if (v === undefined) return undefined;
    total += parseQuantity(v);
  }
  return total;
}

const isTerminal = (pod: KubeObject): boolean => {
  const phase = isRecord(pod.status) ? pod.status.phase : undefined;
  return phase === 'Succeeded' || phase === 'Failed';
};

/** Current usage of a quota's hard keys by the namespace's non-terminal pods. */
export function quotaUsage(store: ObjectStore, ns: string, hard: Record<string, string>): Record<string, number> {
  const podType = mustFindByKind('v1', 'Pod');
  const used: Record<string, number> = {};
  for (const key of Object.keys(hard)) used[key] = 0;
  for (const pod of store.peekList(podType, ns)) {
    if (isTerminal(pod)) continue;
    for (const key of Object.keys(hard)) used[key] = (used[key] ?? 0) + (podUsage(podSpec(pod), key) ?? 0);
  }
  return used;
}

export function resourceQuotaAdmission(store: ObjectStore) {
  const quotaType = mustFindByKind('v1', 'ResourceQuota');
  return (req: AdmissionRequest): void => {
    if (!isPod(req) || req.operation !== 'CREATE') return;
    const ns = req.object.metadata.namespace ?? '';
    const spec = podSpec(req.object);
    const name = req.object.metadata.name ?? '';
    for (const quota of store.peekList(quotaType, ns)) {
      const qspec = isRecord(quota.spec) ? quota.spec : {};
      const hard = (isRecord(qspec.hard) ? qspec.hard : {}) as Record<string, string>;
      const tracked = Object.keys(hard).filter((k) => k === 'pods' || k === 'count/pods' || QUOTA_KEYS[k]);
      if (tracked.length === 0) continue;
      const missing = tracked.filter((k) => podUsage(spec, k) === undefined);
      if (missing.length) throw forbidden(req.resource, name, `failed quota: ${quota.metadata.name ?? ''}: must specify ${missing.join(',')}`);
      const used = quotaUsage(store, ns, hard);
      const exceeded = tracked.filter((k) => (used[k] ?? 0) + (podUsage(spec, k) ?? 0) > parseQuantity(hard[k]));
      if (exceeded.length === 0) continue;
      const fmt = (vals: (k: string) => number): string => exceeded.map((k) => `${k}=${formatQuantity(k, vals(k))}`).join(',');
      throw forbidden(
        req.resource,
        name,
        `exceeded quota: ${quota.metadata.name ?? ''}, requested: ${fmt((k) => podUsage(spec, k) ?? 0)}, used: ${fmt((k) => used[k] ?? 0)}, limited: ${fmt((k) => parseQuantity(hard[k]))}`,
      );
    }
  };
}

const MUTABLE_POD_FIELDS = 'spec.containers[*].image,spec.initContainers[*].image,spec.activeDeadlineSeconds,spec.tolerations (only additions to existing tolerations),spec.terminationGracePeriodSeconds (allow it to be set to 1 if it was previously negative)';

/** Pod spec updates may only change images, the deadline, add tolerations, or bind the pod once. */
export function podUpdateValidation(req: AdmissionRequest): void {
  if (!isPod(req) || req.operation !== 'UPDATE' || req.subresource === 'status' || !req.oldObject) return;
  const strip = (o: KubeObject): Record<string, unknown> => {
    const s = { ...podSpec(o) } as Record<string, unknown>;
    const containers = (podSpec(o).containers ?? []).map((c) => ({ ...c, image: undefined }));
    const init = (podSpec(o).initContainers ?? []).map((c) => ({ ...c, image: undefined }));
    s.containers = containers;
    s.initContainers = init;
    delete s.activeDeadlineSeconds;
    delete s.tolerations;
    delete s.terminationGracePeriodSeconds;
    return s;
  };
  const before = strip(req.oldObject);
  const after = strip(req.object);
  if (!before.nodeName && after.nodeName) before.nodeName = after.nodeName;
  if (deepEqual(JSON.parse(JSON.stringify(before)), JSON.parse(JSON.stringify(after)))) return;
  throw invalid(req.resource, req.object.metadata.name ?? '', [
    { reason: 'FieldValueForbidden', message: `Forbidden: pod updates may not change fields other than ${MUTABLE_POD_FIELDS}`, field: 'spec' },
  ]);
}
