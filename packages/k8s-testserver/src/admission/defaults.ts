/** Defaulting the API server applies on create, limited to the fields controllers commonly read. */
import type { AdmissionRequest } from '../store/store';
import { isRecord, type Container, type KubeObject, type PodSpec } from '../types';

function defaultContainer(c: Container): void {
  const image = c.image ?? '';
  c.imagePullPolicy ??= image.endsWith(':latest') || !/:[^/]+$/.test(image) ? 'Always' : 'IfNotPresent';
  c.terminationMessagePath ??= '/dev/termination-log';
  c.terminationMessagePolicy ??= 'File';
  c.resources ??= {};
}

export function defaultPodSpec(spec: PodSpec): void {
  spec.restartPolicy ??= 'Always';
  spec.terminationGracePeriodSeconds ??= 30;
  spec.dnsPolicy ??= 'ClusterFirst';
  spec.schedulerName ??= 'default-scheduler';
  spec.securityContext ??= {};
  for (const c of [...(spec.containers ?? []), ...(spec.initContainers ?? [])]) defaultContainer(c);
}

function qosClass(spec: PodSpec): string {
  const cs = spec.containers ?? [];
  const any = cs.some((c) => Object.keys(c.resources?.requests ?? {}).length || Object.keys(c.resources?.limits ?? {}).length);
  if (!any) return 'BestEffort';
  const guaranteed = cs.every((c) => {
    const l = c.resources?.limits ?? {};
    const r = c.resources?.requests ?? {};
    return ['cpu', 'memory'].every((k) => l[k] !== undefined && (r[k] === undefined || r[k] === l[k]));
  });
  return guaranteed ? 'Guaranteed' : 'Burstable';
}

const DEFAULT_TOLERATIONS = [
  { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
  { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
];

function defaultPod(obj: KubeObject): void {
  const spec = (isRecord(obj.spec) ? obj.spec : (obj.spec = {})) as PodSpec;
  defaultPodSpec(spec);
  spec.serviceAccountName ??= 'default';
  const tolerations = spec.tolerations ?? [];
  for (const t of DEFAULT_TOLERATIONS) if (!tolerations.some((x) => x.key === t.key && x.effect === t.effect)) tolerations.push({ ...t, operator: 'Exists' });
  spec.tolerations = tolerations;
  obj.status = { phase: 'Pending', qosClass: qosClass(spec) };
}

function defaultTemplateOwner(obj: KubeObject, kind: 'Deployment' | 'ReplicaSet'): void {
  const spec = isRecord(obj.spec) ? obj.spec : (obj.spec = {});
  spec.replicas ??= 1;
  if (kind === 'Deployment') {
    spec.strategy ??= { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '25%', maxSurge: '25%' } };
    spec.revisionHistoryLimit ??= 10;
    spec.progressDeadlineSeconds ??= 600;
  }
  const template = isRecord(spec.template) ? spec.template : undefined;
  if (template && isRecord(template.spec)) defaultPodSpec(template.spec as PodSpec);
  obj.status = {};
}

export function applyDefaults(req: AdmissionRequest): void {
  const { resource: r, object: obj } = req;
  if (req.operation !== 'CREATE') return;
  if (r.group === '' && r.kind === 'Namespace') {
    obj.metadata.labels = { ...obj.metadata.labels, 'kubernetes.io/metadata.name': obj.metadata.name ?? '' };
    obj.spec = { finalizers: ['kubernetes'] };
    obj.status = { phase: 'Active' };
  } else if (r.group === '' && r.kind === 'Pod') defaultPod(obj);
  else if (r.group === 'apps' && (r.kind === 'Deployment' || r.kind === 'ReplicaSet')) defaultTemplateOwner(obj, r.kind);
  else if (r.group === '' && r.kind === 'Secret') {
    obj.type ??= 'Opaque';
  }
  if (r.group === '' && r.kind === 'Secret' && isRecord(obj.stringData)) {
    const data = isRecord(obj.data) ? obj.data : {};
    for (const [k, v] of Object.entries(obj.stringData)) data[k] = Buffer.from(String(v)).toString('base64');
    obj.data = data;
    delete obj.stringData;
  }
}

/** `stringData` is write-only on every write, not just create. */
export function foldStringData(req: AdmissionRequest): void {
  const obj = req.object;
  if (req.resource.kind !== 'Secret' || !isRecord(obj.stringData)) return;
  const data = isRecord(obj.data) ? obj.data : {};
  for (const [k, v] of Object.entries(obj.stringData)) data[k] = Buffer.from(String(v)).toString('base64');
  obj.data = data;
  delete obj.stringData;
}
