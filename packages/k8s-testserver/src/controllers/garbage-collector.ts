/**
 * Garbage collection by ownerReferences and the namespace controller: dependents of a deleted
 * owner are deleted (background) or orphaned; a foreground-deleting owner waits for them; a
 * terminating namespace is emptied and then finalized.
 */
import { mustFindByKind, resourceKey, type ResourceType } from '../store/resources';
import type { ObjectStore, StoreEvent } from '../store/store';
import { isRecord, type KubeObject } from '../types';
import { WorkQueue } from './queue';

export class GarbageCollector {
  private readonly owners = new WorkQueue('gc', (uid) => this.collect(uid));
  private readonly namespaces = new WorkQueue('namespace', (name) => this.cleanNamespace(name));
  private readonly nsType = mustFindByKind('v1', 'Namespace');
  private readonly saType = mustFindByKind('v1', 'ServiceAccount');
  private readonly unsubscribe: () => void;
  /** uid → the owner's object while it is alive (deleted uids are absent). */
  private readonly live = new Map<string, KubeObject>();

  /** owner uid → its dependents (by store identity), so collection never scans the whole store. */
  private readonly dependents = new Map<string, Map<string, { resource: ResourceType; namespace?: string; name: string }>>();

  constructor(private readonly store: ObjectStore) {
    for (const { resource, object } of store.all()) {
      if (object.metadata.uid) this.live.set(object.metadata.uid, object);
      this.index(resource, undefined, object);
    }
    this.unsubscribe = store.subscribe((e) => this.onEvent(e));
  }

  private index(resource: ResourceType, before: KubeObject | undefined, after: KubeObject | undefined): void {
    const o = after ?? before;
    if (!o) return;
    const id = `${resourceKey(resource)}|${o.metadata.namespace ?? ''}|${o.metadata.name ?? ''}`;
    for (const ref of before?.metadata.ownerReferences ?? []) this.dependents.get(ref.uid)?.delete(id);
    for (const ref of after?.metadata.ownerReferences ?? []) {
      let m = this.dependents.get(ref.uid);
      if (!m) {
        m = new Map<string, { resource: ResourceType; namespace?: string; name: string }>();
        this.dependents.set(ref.uid, m);
      }
      m.set(id, { resource, ...(o.metadata.namespace ? { namespace: o.metadata.namespace } : {}), name: o.metadata.name ?? '' });
    }
    for (const ref of before?.metadata.ownerReferences ?? []) if (this.dependents.get(ref.uid)?.size === 0) this.dependents.delete(ref.uid);
  }

  private onEvent(e: StoreEvent): void {
    this.index(e.resource, e.type === 'ADDED' ? undefined : (e.previous ?? e.object), e.type === 'DELETED' ? undefined : e.object);
    const uid = e.object.metadata.uid ?? '';
    if (e.type === 'DELETED') this.live.delete(uid);
    else this.live.set(uid, e.object);
    if (e.type === 'DELETED' || e.object.metadata.deletionTimestamp) this.owners.add(uid);
    // A dependent went away: its owner may be waiting in foreground deletion.
    if (e.type === 'DELETED') for (const ref of e.object.metadata.ownerReferences ?? []) this.owners.add(ref.uid);
    if (e.resource === this.nsType) {
      if (e.type === 'ADDED') this.namespaces.add(e.object.metadata.name ?? '');
      if (e.object.metadata.deletionTimestamp && e.type !== 'DELETED') this.namespaces.add(e.object.metadata.name ?? '');
    } else if (e.type === 'DELETED' && e.object.metadata.namespace) {
      const ns = this.store.peek(this.nsType, undefined, e.object.metadata.namespace);
      if (ns?.metadata.deletionTimestamp) this.namespaces.add(ns.metadata.name ?? '');
    }
  }

  private dependentsOf(uid: string): { resource: ResourceType; object: KubeObject }[] {
    const out: { resource: ResourceType; object: KubeObject }[] = [];
    for (const d of this.dependents.get(uid)?.values() ?? []) {
      const object = this.store.peek(d.resource, d.namespace, d.name);
      if (object?.metadata.ownerReferences?.some((r) => r.uid === uid)) out.push({ resource: d.resource, object });
    }
    return out;
  }

  private collect(uid: string): { requeueAfterMs?: number } | void {
    const owner = this.live.get(uid);
    const dependents = this.dependentsOf(uid);
    if (owner && !owner.metadata.deletionTimestamp) return;
    const finalizers = owner?.metadata.finalizers ?? [];
    if (owner && finalizers.includes('orphan')) {
      for (const d of dependents) {
        this.store.update(d.resource, d.object.metadata.namespace, d.object.metadata.name ?? '', (cur) => {
          cur.metadata.ownerReferences = (cur.metadata.ownerReferences ?? []).filter((r) => r.uid !== uid);
          if (cur.metadata.ownerReferences.length === 0) delete cur.metadata.ownerReferences;
          return cur;
        }, { manager: 'generic-garbage-collector' });
      }
      this.dropFinalizer(owner, 'orphan');
      return;
    }
    if (owner && finalizers.includes('foregroundDeletion')) {
      for (const d of dependents) this.deleteDependent(d, 'Foreground');
      if (dependents.length === 0) this.dropFinalizer(owner, 'foregroundDeletion');
      return;
    }
    if (owner) return;
    // Owner gone: delete dependents whose every owner is gone.
    for (const d of dependents) {
      const refs = d.object.metadata.ownerReferences ?? [];
      if (refs.every((r) => !this.live.has(r.uid))) this.deleteDependent(d, 'Background');
    }
  }

  private deleteDependent(d: { resource: ResourceType; object: KubeObject }, policy: 'Foreground' | 'Background'): void {
    if (d.object.metadata.deletionTimestamp) return;
    try {
      this.store.delete(d.resource, d.object.metadata.namespace, d.object.metadata.name ?? '', { propagationPolicy: policy }, { manager: 'generic-garbage-collector' });
    } catch {
      // deleted meanwhile
    }
  }

  private dropFinalizer(owner: KubeObject, finalizer: string): void {
    const r = this.store.resourceFor(owner.apiVersion, owner.kind);
    this.store.update(r, owner.metadata.namespace, owner.metadata.name ?? '', (cur) => {
      cur.metadata.finalizers = (cur.metadata.finalizers ?? []).filter((f) => f !== finalizer);
      return cur;
    }, { manager: 'generic-garbage-collector' });
  }

  private cleanNamespace(name: string): { requeueAfterMs?: number } | void {
    const ns = this.store.peek(this.nsType, undefined, name);
    if (!ns) return;
    if (!ns.metadata.deletionTimestamp) {
      if (!this.store.peek(this.saType, name, 'default')) {
        this.store.create(this.saType, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default', namespace: name } }, { manager: 'kube-controller-manager' });
      }
      return;
    }
    let remaining = 0;
    for (const { resource, object } of this.store.all()) {
      if (!resource.namespaced || object.metadata.namespace !== name) continue;
      remaining += 1;
      this.deleteDependent({ resource, object }, 'Background');
    }
    if (remaining > 0) return { requeueAfterMs: 100 };
    this.store.update(this.nsType, undefined, name, (cur) => {
      const spec = isRecord(cur.spec) ? cur.spec : {};
      return { ...cur, spec: { ...spec, finalizers: [] } };
    }, { manager: 'namespace-controller', subresource: 'finalize' });
  }

  close(): void {
    this.unsubscribe();
    this.owners.close();
    this.namespaces.close();
  }
}
