/**
 * Deployment and ReplicaSet controllers, reduced to what a client decides on: a ReplicaSet per pod
 * template (named `<deployment>-<pod-template-hash>`), old ReplicaSets scaled down once the new one
 * is available, and the `status` fields and `Available`/`Progressing` conditions the real
 * controller writes.
 */
import { ApiError } from '../store/errors';
import { deepEqual } from '../store/list-semantics';
import { mustFindByKind } from '../store/resources';
import { matchesLabelSelectorObject } from '../store/selectors';
import type { ObjectStore, StoreEvent } from '../store/store';
import { clone, isRecord, nowTimestamp, type Condition, type KubeObject, type OwnerReference } from '../types';
import { recordEvent } from './events';
import { WorkQueue, splitKey } from './queue';

const REVISION = 'deployment.kubernetes.io/revision';
const HASH_LABEL = 'pod-template-hash';
const HASH_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

const stableStringify = (v: unknown): string => {
  if (Array.isArray(v)) return `[${v.map(stableStringify).join(',')}]`;
  if (isRecord(v)) return `{${Object.keys(v).sort().filter((k) => v[k] !== undefined).map((k) => `${JSON.stringify(k)}:${stableStringify(v[k])}`).join(',')}}`;
  return JSON.stringify(v);
};

/** FNV-1a of the pod template, spelled with the API server's "safe" alphabet like pod-template-hash. */
export function podTemplateHash(template: unknown): string {
  let h = 0x811c9dc5;
  for (const ch of stableStringify(template)) {
    h ^= ch.charCodeAt(0);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  let out = '';
  for (let i = 0; i < 10; i++) {
    out += HASH_ALPHABET[h % HASH_ALPHABET.length] ?? 'b';
    h = Math.floor(h / HASH_ALPHABET.length) || Math.imul(h + i + 1, 0x01000193) >>> 0;
  }
  return out;
}

const controllerRef = (o: KubeObject): OwnerReference | undefined => o.metadata.ownerReferences?.find((r) => r.controller === true);
const specOf = (o: KubeObject): Record<string, unknown> => (isRecord(o.spec) ? o.spec : {});
const statusOf = (o: KubeObject): Record<string, unknown> => (isRecord(o.status) ? o.status : {});
const num = (v: unknown, d = 0): number => (typeof v === 'number' ? v : d);

function isPodReady(pod: KubeObject): boolean {
  const conds = statusOf(pod).conditions;
  return Array.isArray(conds) && (conds as Condition[]).some((c) => c.type === 'Ready' && c.status === 'True');
}

const isActivePod = (pod: KubeObject): boolean => {
  const phase = statusOf(pod).phase;
  return !pod.metadata.deletionTimestamp && phase !== 'Succeeded' && phase !== 'Failed';
};

/** intstr "25%" or 1 against a replica count; percentages round down (maxUnavailable) or up (maxSurge). */
function resolveIntOrPercent(v: unknown, total: number, roundUp: boolean): number {
  if (typeof v === 'number') return v;
  if (typeof v === 'string' && v.endsWith('%')) {
    const x = (Number(v.slice(0, -1)) * total) / 100;
    return roundUp ? Math.ceil(x) : Math.floor(x);
  }
  return 0;
}

export class DeploymentController {
  private readonly deployType = mustFindByKind('apps/v1', 'Deployment');
  private readonly rsType = mustFindByKind('apps/v1', 'ReplicaSet');
  private readonly podType = mustFindByKind('v1', 'Pod');
  private readonly deployments = new WorkQueue('deployment', (k) => this.syncDeployment(k));
  private readonly replicaSets = new WorkQueue('replicaset', (k) => this.syncReplicaSet(k));
  private readonly unsubscribe: () => void;

  constructor(private readonly store: ObjectStore) {
    this.unsubscribe = store.subscribe((e) => this.onEvent(e));
    for (const d of store.peekList(this.deployType)) this.deployments.add(`${d.metadata.namespace ?? ''}/${d.metadata.name ?? ''}`);
    for (const rs of store.peekList(this.rsType)) this.replicaSets.add(`${rs.metadata.namespace ?? ''}/${rs.metadata.name ?? ''}`);
  }

  private onEvent(e: StoreEvent): void {
    const ns = e.object.metadata.namespace ?? '';
    const owner = controllerRef(e.object);
    if (e.resource === this.deployType) this.deployments.add(`${ns}/${e.object.metadata.name ?? ''}`);
    else if (e.resource === this.rsType) {
      this.replicaSets.add(`${ns}/${e.object.metadata.name ?? ''}`);
      if (owner?.kind === 'Deployment') this.deployments.add(`${ns}/${owner.name}`);
    } else if (e.resource === this.podType && owner?.kind === 'ReplicaSet') this.replicaSets.add(`${ns}/${owner.name}`);
  }

  private ownedBy(type: typeof this.rsType, ns: string, uid: string): KubeObject[] {
    return this.store.peekList(type, ns).filter((o) => controllerRef(o)?.uid === uid);
  }

  private syncDeployment(key: string): { requeueAfterMs?: number } | void {
    const [ns, name] = splitKey(key);
    const d = this.store.peek(this.deployType, ns, name);
    if (!d || d.metadata.deletionTimestamp) return;
    const spec = specOf(d);
    const desired = num(spec.replicas, 1);
    const template = isRecord(spec.template) ? spec.template : {};
    const hash = podTemplateHash(template);
    const owned = this.ownedBy(this.rsType, ns, d.metadata.uid ?? '');
    const revisionOf = (rs: KubeObject): number => Number(rs.metadata.annotations?.[REVISION] ?? '0');
    const maxRevision = owned.reduce((m, rs) => Math.max(m, revisionOf(rs)), 0);
    let newRs = owned.find((rs) => rs.metadata.labels?.[HASH_LABEL] === hash);
    const manager = { manager: 'kube-controller-manager' };
    let created = false;
    if (!newRs) {
      const selector = isRecord(spec.selector) ? clone(spec.selector) : {};
      const matchLabels = isRecord(selector.matchLabels) ? selector.matchLabels : {};
      const tmeta = isRecord(template.metadata) ? template.metadata : {};
      const labels = { ...(isRecord(tmeta.labels) ? (tmeta.labels as Record<string, string>) : {}), [HASH_LABEL]: hash };
      newRs = this.store.create(
        this.rsType,
        {
          apiVersion: 'apps/v1',
          kind: 'ReplicaSet',
          metadata: {
            name: `${name}-${hash}`,
            namespace: ns,
            labels,
            annotations: { [REVISION]: String(maxRevision + 1), 'deployment.kubernetes.io/desired-replicas': String(desired) },
            ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name, uid: d.metadata.uid ?? '', controller: true, blockOwnerDeletion: true }],
          },
          spec: {
            replicas: desired,
            selector: { ...selector, matchLabels: { ...matchLabels, [HASH_LABEL]: hash } },
            template: { ...clone(template), metadata: { ...clone(tmeta), labels } },
          },
        },
        manager,
      );
      created = true;
      recordEvent(this.store, 'deployment-controller', d, 'Normal', 'ScalingReplicaSet', `Scaled up replica set ${newRs.metadata.name ?? ''} from 0 to ${desired}`);
    } else {
      if (revisionOf(newRs) < maxRevision) {
        newRs = this.store.update(this.rsType, ns, newRs.metadata.name ?? '', (cur) => {
          cur.metadata.annotations = { ...cur.metadata.annotations, [REVISION]: String(maxRevision + 1) };
          return cur;
        }, manager);
      }
      if (num(specOf(newRs).replicas) !== desired) newRs = this.scale(newRs, desired);
    }
    const newStatus = statusOf(newRs);
    const newAvailable = num(newStatus.availableReplicas);
    const strategy = isRecord(spec.strategy) ? spec.strategy : {};
    const olds = owned.filter((rs) => rs.metadata.uid !== newRs.metadata.uid);
    const drainOld = strategy.type === 'Recreate' || newAvailable >= desired;
    if (drainOld) for (const rs of olds) if (num(specOf(rs).replicas) !== 0) this.scale(rs, 0);
    this.pruneHistory(olds, num(spec.revisionHistoryLimit, 10));

    const all = this.ownedBy(this.rsType, ns, d.metadata.uid ?? '');
    const sum = (f: string): number => all.reduce((s, rs) => s + num(statusOf(rs)[f]), 0);
    const replicas = sum('replicas');
    const available = sum('availableReplicas');
    const updated = num(statusOf(newRs).replicas);
    const rolling = isRecord(strategy.rollingUpdate) ? strategy.rollingUpdate : {};
    const maxUnavailable = strategy.type === 'Recreate' ? 0 : resolveIntOrPercent(rolling.maxUnavailable ?? '25%', desired, false);
    const prev = statusOf(d);
    const prevConds = Array.isArray(prev.conditions) ? (prev.conditions as Condition[]) : [];
    const now = nowTimestamp();
    const cond = (type: string, status: 'True' | 'False', reason: string, message: string, progressed: boolean): Condition => {
      const old = prevConds.find((c) => c.type === type);
      const same = old?.status === status && old.reason === reason;
      return {
        type,
        status,
        lastUpdateTime: same && !progressed ? (old.lastUpdateTime ?? now) : now,
        lastTransitionTime: old?.status === status ? (old.lastTransitionTime ?? now) : now,
        reason,
        message,
      };
    };
    const rsName = newRs.metadata.name ?? '';
    const complete = updated === desired && replicas === desired && available >= desired && num(newStatus.observedGeneration) >= num(newRs.metadata.generation, 1);
    const progressed = created || num(prev.updatedReplicas) !== updated || num(prev.readyReplicas) !== sum('readyReplicas') || num(prev.availableReplicas) !== available;
    let progressing: Condition;
    if (complete) progressing = cond('Progressing', 'True', 'NewReplicaSetAvailable', `ReplicaSet "${rsName}" has successfully progressed.`, false);
    else {
      const old = prevConds.find((c) => c.type === 'Progressing');
      const deadlineMs = num(spec.progressDeadlineSeconds, 600) * 1000;
      const since = old?.lastUpdateTime ? Date.parse(old.lastUpdateTime) : Date.now();
      if (!progressed && old && old.reason !== 'NewReplicaSetAvailable' && Date.now() - since > deadlineMs) {
        progressing = cond('Progressing', 'False', 'ProgressDeadlineExceeded', `ReplicaSet "${rsName}" has timed out progressing.`, false);
      } else progressing = cond('Progressing', 'True', created ? 'NewReplicaSetCreated' : 'ReplicaSetUpdated', created ? `Created new replica set "${rsName}"` : `ReplicaSet "${rsName}" is progressing.`, progressed);
    }
    const availableOk = available >= desired - maxUnavailable;
    const availableCond = availableOk
      ? cond('Available', 'True', 'MinimumReplicasAvailable', 'Deployment has minimum availability.', false)
      : cond('Available', 'False', 'MinimumReplicasUnavailable', 'Deployment does not have minimum availability.', false);
    const status: Record<string, unknown> = {
      observedGeneration: d.metadata.generation ?? 1,
      replicas,
      updatedReplicas: updated,
      readyReplicas: sum('readyReplicas'),
      availableReplicas: available,
      ...(desired - available > 0 ? { unavailableReplicas: desired - available } : {}),
      conditions: [availableCond, progressing],
    };
    for (const k of ['replicas', 'updatedReplicas', 'readyReplicas', 'availableReplicas']) if (status[k] === 0) delete status[k];
    if (!deepEqual(status, prev)) {
      this.store.update(this.deployType, ns, name, (cur) => ({ ...cur, status }), { ...manager, subresource: 'status' });
    }
    const revision = newRs.metadata.annotations?.[REVISION];
    if (revision && d.metadata.annotations?.[REVISION] !== revision) {
      this.store.update(this.deployType, ns, name, (cur) => {
        cur.metadata.annotations = { ...cur.metadata.annotations, [REVISION]: revision };
        return cur;
      }, manager);
    }
    return complete ? undefined : { requeueAfterMs: 1000 };
  }

  private scale(rs: KubeObject, replicas: number): KubeObject {
    const before = num(specOf(rs).replicas);
    const out = this.store.update(this.rsType, rs.metadata.namespace, rs.metadata.name ?? '', (cur) => ({ ...cur, spec: { ...specOf(cur), replicas } }), { manager: 'kube-controller-manager' });
    const owner = controllerRef(rs);
    const d = owner ? this.store.peek(this.deployType, rs.metadata.namespace, owner.name) : undefined;
    if (d) recordEvent(this.store, 'deployment-controller', d, 'Normal', 'ScalingReplicaSet', `Scaled ${replicas > before ? 'up' : 'down'} replica set ${rs.metadata.name ?? ''} from ${before} to ${replicas}`);
    return out;
  }

  private pruneHistory(olds: KubeObject[], limit: number): void {
    const idle = olds
      .filter((rs) => num(specOf(rs).replicas) === 0 && num(statusOf(rs).replicas) === 0)
      .sort((a, b) => Number(a.metadata.annotations?.[REVISION] ?? 0) - Number(b.metadata.annotations?.[REVISION] ?? 0));
    for (const rs of idle.slice(0, Math.max(0, idle.length - limit))) {
      this.store.delete(this.rsType, rs.metadata.namespace, rs.metadata.name ?? '', {}, { manager: 'kube-controller-manager' });
    }
  }

  private syncReplicaSet(key: string): { requeueAfterMs?: number } | void {
    const [ns, name] = splitKey(key);
    const rs = this.store.peek(this.rsType, ns, name);
    if (!rs || rs.metadata.deletionTimestamp) return;
    const spec = specOf(rs);
    const desired = num(spec.replicas, 1);
    const uid = rs.metadata.uid ?? '';
    const manager = { manager: 'kube-controller-manager' };
    const pods = this.store
      .peekList(this.podType, ns)
      .filter((p) => controllerRef(p)?.uid === uid && isActivePod(p) && matchesLabelSelectorObject(spec.selector, p.metadata.labels));
    let failure: string | undefined;
    if (pods.length < desired) {
      const template = isRecord(spec.template) ? spec.template : {};
      const tmeta = isRecord(template.metadata) ? template.metadata : {};
      for (let i = pods.length; i < desired && i - pods.length < 500; i++) {
        try {
          this.store.create(
            this.podType,
            {
              apiVersion: 'v1',
              kind: 'Pod',
              metadata: {
                generateName: `${name}-`,
                namespace: ns,
                labels: isRecord(tmeta.labels) ? (clone(tmeta.labels) as Record<string, string>) : {},
                ...(isRecord(tmeta.annotations) ? { annotations: clone(tmeta.annotations) as Record<string, string> } : {}),
                ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name, uid, controller: true, blockOwnerDeletion: true }],
              },
              spec: clone(template.spec),
            },
            manager,
          );
        } catch (e) {
          failure = e instanceof ApiError ? e.message : String(e);
          recordEvent(this.store, 'replicaset-controller', rs, 'Warning', 'FailedCreate', `Error creating: ${failure}`);
          break;
        }
      }
    } else if (pods.length > desired) {
      const rank = (p: KubeObject): number => (!(isRecord(p.spec) && p.spec.nodeName) ? 0 : statusOf(p).phase === 'Pending' ? 1 : !isPodReady(p) ? 2 : 3);
      const victims = [...pods].sort((a, b) => rank(a) - rank(b) || (b.metadata.creationTimestamp ?? '').localeCompare(a.metadata.creationTimestamp ?? '')).slice(0, pods.length - desired);
      for (const p of victims) this.store.delete(this.podType, ns, p.metadata.name ?? '', {}, manager);
    }
    const now = this.store
      .peekList(this.podType, ns)
      .filter((p) => controllerRef(p)?.uid === uid && isActivePod(p));
    const ready = now.filter(isPodReady).length;
    const prev = statusOf(rs);
    const prevConds = Array.isArray(prev.conditions) ? (prev.conditions as Condition[]) : [];
    const conditions: Condition[] = failure
      ? [{ type: 'ReplicaFailure', status: 'True', reason: 'FailedCreate', message: failure, lastTransitionTime: prevConds.find((c) => c.type === 'ReplicaFailure')?.lastTransitionTime ?? nowTimestamp() }]
      : [];
    const status: Record<string, unknown> = {
      replicas: now.length,
      fullyLabeledReplicas: now.length,
      readyReplicas: ready,
      availableReplicas: ready,
      observedGeneration: rs.metadata.generation ?? 1,
      ...(conditions.length ? { conditions } : {}),
    };
    for (const k of ['fullyLabeledReplicas', 'readyReplicas', 'availableReplicas']) if (status[k] === 0) delete status[k];
    if (!deepEqual(status, prev)) this.store.update(this.rsType, ns, name, (cur) => ({ ...cur, status }), { ...manager, subresource: 'status' });
    return failure ? { requeueAfterMs: 1000 } : undefined;
  }

  close(): void {
    this.unsubscribe();
    this.deployments.close();
    this.replicaSets.close();
  }
}
