import { randomUUID } from 'node:crypto';
import { alreadyExists, conflict, expired, forbidden, invalid, notFound, successStatus, type StatusBody } from './errors';
import { deepEqual } from './list-semantics';
import { recordUpdate, serverSideApply, type Scope } from './managed-fields';
import { nameProblems, randomSuffix } from './names';
import { findByKind, hasStatusSubresource, mustFindByKind, resourceKey, RESOURCE_TYPES, type ResourceType } from './resources';
import { clone, nowTimestamp, type KubeObject } from '../types';

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

/** One accepted change. `object` is the stored snapshot: never mutate it. */
export interface StoreEvent {
  type: WatchEventType;
  resource: ResourceType;
  object: KubeObject;
  previous?: KubeObject;
  rv: number;
}

export interface WriteContext {
  /** Field manager the write is accounted to (query `fieldManager`, or the component's name). */
  manager: string;
  subresource?: string;
  dryRun?: boolean;
}

export interface AdmissionRequest {
  operation: 'CREATE' | 'UPDATE';
  resource: ResourceType;
  /** The object about to be stored; plugins may mutate it (defaulting) or throw an ApiError. */
  object: KubeObject;
  oldObject?: KubeObject;
  subresource?: string;
}

export type AdmissionPlugin = (req: AdmissionRequest) => void;

export interface DeleteOptions {
  propagationPolicy?: 'Foreground' | 'Background' | 'Orphan';
  gracePeriodSeconds?: number;
  preconditions?: { uid?: string; resourceVersion?: string };
}

export type DeleteResult = { kind: 'gone'; object: KubeObject; status: StatusBody } | { kind: 'pending'; object: KubeObject };

/** Decides whether a delete is graceful (pods on a node the kubelet stand-in runs). */
export type GracefulDeletion = (r: ResourceType, obj: KubeObject, opts: DeleteOptions) => number | undefined;

const objKey = (ns: string | undefined, name: string): string => `${ns ?? ''}/${name}`;

/**
 * The in-memory object store: one global resourceVersion counter, a bounded event history for
 * watch resumption, admission, finalizers and field ownership. Everything the HTTP layer and the
 * built-in controllers write goes through here.
 */
export class ObjectStore {
  private rv = 0;
  private readonly objects = new Map<string, Map<string, KubeObject>>();
  private history: StoreEvent[] = [];
  /** Resumes from a resourceVersion below this answer 410 Gone. */
  private compactedRv = 0;
  private readonly listeners = new Set<(e: StoreEvent) => void>();
  private readonly writes = new Map<string, number>();
  readonly admission: AdmissionPlugin[] = [];
  gracefulDeletion: GracefulDeletion = () => undefined;

  constructor(private readonly historyLimit: number) {
    for (const r of RESOURCE_TYPES) this.objects.set(resourceKey(r), new Map());
  }

  currentRv(): number {
    return this.rv;
  }

  oldestResumableRv(): number {
    return this.compactedRv;
  }

  subscribe(fn: (e: StoreEvent) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  writeCount(manager?: string): number {
    if (manager !== undefined) return this.writes.get(manager) ?? 0;
    let n = 0;
    for (const v of this.writes.values()) n += v;
    return n;
  }

  /** Drops the watch history: any resume from a resourceVersion older than now answers 410. */
  expireHistory(): void {
    this.history = [];
    this.compactedRv = this.rv;
  }

  /** Events after `rv`, or a 410 when they are no longer kept. */
  eventsAfter(rv: number): StoreEvent[] {
    if (rv < this.compactedRv) throw expired(`too old resource version: ${rv} (${this.compactedRv})`);
    const first = this.history.findIndex((e) => e.rv > rv);
    return first < 0 ? [] : this.history.slice(first);
  }

  private bucket(r: ResourceType): Map<string, KubeObject> {
    const b = this.objects.get(resourceKey(r));
    if (!b) throw new Error(`unknown resource ${resourceKey(r)}`);
    return b;
  }

  /** Stored object (not a copy: callers that keep or change it must clone). */
  peek(r: ResourceType, ns: string | undefined, name: string): KubeObject | undefined {
    return this.bucket(r).get(objKey(r.namespaced ? ns : undefined, name));
  }

  get(r: ResourceType, ns: string | undefined, name: string): KubeObject | undefined {
    const o = this.peek(r, ns, name);
    return o ? clone(o) : undefined;
  }

  /** Stored objects, sorted by namespace and name (not copies). */
  peekList(r: ResourceType, ns?: string): KubeObject[] {
    const out: KubeObject[] = [];
    for (const o of this.bucket(r).values()) if (!ns || !r.namespaced || o.metadata.namespace === ns) out.push(o);
    return out.sort((a, b) => objKey(a.metadata.namespace, a.metadata.name ?? '').localeCompare(objKey(b.metadata.namespace, b.metadata.name ?? '')));
  }

  /** Every stored object in every resource type (for the garbage collector and namespace cleanup). */
  *all(): Generator<{ resource: ResourceType; object: KubeObject }> {
    for (const r of RESOURCE_TYPES) for (const o of this.bucket(r).values()) yield { resource: r, object: o };
  }

  private commit(type: WatchEventType, r: ResourceType, obj: KubeObject, previous: KubeObject | undefined, ctx: WriteContext): KubeObject {
    this.rv += 1;
    obj.metadata.resourceVersion = String(this.rv);
    const b = this.bucket(r);
    const k = objKey(obj.metadata.namespace, obj.metadata.name ?? '');
    if (type === 'DELETED') b.delete(k);
    else b.set(k, obj);
    const event: StoreEvent = { type, resource: r, object: obj, ...(previous ? { previous } : {}), rv: this.rv };
    this.history.push(event);
    if (this.history.length > this.historyLimit) {
      const dropped = this.history.splice(0, this.history.length - this.historyLimit);
      this.compactedRv = dropped[dropped.length - 1]?.rv ?? this.compactedRv;
    }
    this.writes.set(ctx.manager, (this.writes.get(ctx.manager) ?? 0) + 1);
    for (const l of this.listeners) l(event);
    return clone(obj);
  }

  private checkNamespace(r: ResourceType, ns: string | undefined, name: string): void {
    if (!r.namespaced) return;
    const nsType = mustFindByKind('v1', 'Namespace');
    const nsObj = this.peek(nsType, undefined, ns ?? '');
    if (!nsObj) throw notFound(nsType, ns ?? '');
    if (nsObj.metadata.deletionTimestamp) {
      throw forbidden(r, name, `unable to create new content in namespace ${ns ?? ''} because it is being terminated`);
    }
  }

  create(r: ResourceType, input: KubeObject, ctx: WriteContext, keepManagedFields = false): KubeObject {
    const obj = clone(input);
    const presetManaged = keepManagedFields ? input.metadata.managedFields : undefined;
    obj.apiVersion = input.apiVersion;
    obj.kind = r.kind;
    const meta = obj.metadata;
    if (!meta.name && meta.generateName) meta.name = `${meta.generateName}${randomSuffix()}`;
    const name = meta.name ?? '';
    if (!name) throw invalid(r, '', [{ reason: 'FieldValueRequired', message: 'Required value: name or generateName is required', field: 'metadata.name' }]);
    const problems = nameProblems(name, r.kind === 'Namespace');
    if (problems.length > 0) throw invalid(r, name, problems.map((p) => ({ reason: 'FieldValueInvalid', message: `Invalid value: "${name}": ${p}`, field: 'metadata.name' })));
    if (!r.namespaced) delete meta.namespace;
    this.checkNamespace(r, meta.namespace, name);
    if (this.peek(r, meta.namespace, name)) throw alreadyExists(r, name);
    for (const k of ['uid', 'resourceVersion', 'deletionTimestamp', 'deletionGracePeriodSeconds', 'managedFields'] as const) delete meta[k];
    meta.uid = randomUUID();
    meta.creationTimestamp = nowTimestamp();
    meta.generation = 1;
    for (const plugin of this.admission) plugin({ operation: 'CREATE', resource: r, object: obj });
    if (presetManaged) obj.metadata.managedFields = clone(presetManaged);
    else recordUpdate(undefined, obj, ctx.manager, hasStatusSubresource(r) ? 'main' : 'all');
    if (ctx.dryRun) return clone(obj);
    return this.commit('ADDED', r, obj, undefined, ctx);
  }

  /**
   * Read-modify-write. `mutate` gets a copy of the stored object and returns the desired one; a
   * `metadata.resourceVersion` it leaves that differs from the stored one is a 409 Conflict.
   */
  update(r: ResourceType, ns: string | undefined, name: string, mutate: (current: KubeObject) => KubeObject, ctx: WriteContext): KubeObject {
    const cur = this.peek(r, ns, name);
    if (!cur) throw notFound(r, name);
    const next = mutate(clone(cur));
    return this.finishUpdate(r, cur, next, ctx, 'record');
  }

  /** Server-side apply (creates the object when absent). */
  apply(r: ResourceType, ns: string | undefined, name: string, applied: KubeObject, ctx: WriteContext & { force: boolean }): { object: KubeObject; created: boolean } {
    const cur = this.peek(r, ns, name);
    if (!cur) {
      const shell: KubeObject = { apiVersion: applied.apiVersion, kind: r.kind, metadata: { name, ...(r.namespaced ? { namespace: ns } : {}) } };
      const merged = serverSideApply(shell, applied, { manager: ctx.manager, force: true, scope: this.scopeOf(r, ctx) });
      return { object: this.create(r, merged, ctx, true), created: true };
    }
    const rv = applied.metadata.resourceVersion;
    if (rv !== undefined && rv !== cur.metadata.resourceVersion) throw conflict(r, name);
    const next = serverSideApply(cur, applied, { manager: ctx.manager, force: ctx.force, scope: this.scopeOf(r, ctx), ...(ctx.subresource ? { subresource: ctx.subresource } : {}) });
    next.metadata.resourceVersion = cur.metadata.resourceVersion;
    return { object: this.finishUpdate(r, cur, next, ctx, 'keep'), created: false };
  }

  private scopeOf(r: ResourceType, ctx: WriteContext): Scope {
    if (ctx.subresource === 'status') return 'status';
    return hasStatusSubresource(r) ? 'main' : 'all';
  }

  /** `ownership`: 'record' derives managedFields from the change; 'keep' keeps what apply computed. */
  private finishUpdate(r: ResourceType, cur: KubeObject, next: KubeObject, ctx: WriteContext, ownership: 'record' | 'keep'): KubeObject {
    const name = cur.metadata.name ?? '';
    const managed = ownership === 'keep' ? next.metadata.managedFields : cur.metadata.managedFields;
    if (next.metadata.resourceVersion !== undefined && next.metadata.resourceVersion !== '' && next.metadata.resourceVersion !== cur.metadata.resourceVersion) {
      throw conflict(r, name);
    }
    if (next.metadata.uid !== undefined && next.metadata.uid !== cur.metadata.uid) {
      throw conflict(r, name, `Precondition failed: UID in precondition: ${next.metadata.uid}, UID in object meta: ${cur.metadata.uid ?? ''}`);
    }
    next.apiVersion = cur.apiVersion;
    next.kind = cur.kind;
    for (const k of ['name', 'namespace', 'uid', 'creationTimestamp', 'deletionTimestamp', 'deletionGracePeriodSeconds', 'generation'] as const) {
      if (cur.metadata[k] === undefined) delete next.metadata[k];
      else (next.metadata as Record<string, unknown>)[k] = cur.metadata[k];
    }
    const scope = this.scopeOf(r, ctx);
    if (scope === 'status') {
      const status = next.status;
      const { status: _s, ...rest } = cur;
      Object.assign(next, clone(rest), status === undefined ? {} : { status });
      if (status === undefined) delete next.status;
    } else if (scope === 'main') {
      if (cur.status === undefined) delete next.status;
      else next.status = clone(cur.status);
    }
    if (scope !== 'status' && specChanged(cur, next)) next.metadata.generation = (cur.metadata.generation ?? 1) + 1;
    for (const plugin of this.admission) plugin({ operation: 'UPDATE', resource: r, object: next, oldObject: cur, ...(ctx.subresource ? { subresource: ctx.subresource } : {}) });
    if (managed) next.metadata.managedFields = clone(managed);
    else delete next.metadata.managedFields;
    if (ownership === 'record') recordUpdate(cur, next, ctx.manager, scope, ctx.subresource);
    next.metadata.resourceVersion = cur.metadata.resourceVersion;
    if (sameIgnoringTimes(cur, next)) return clone(cur);
    if (ctx.dryRun) return clone(next);
    if (cur.metadata.deletionTimestamp && !hasFinalizers(r, next)) {
      return this.commit('DELETED', r, next, cur, ctx);
    }
    return this.commit('MODIFIED', r, next, cur, ctx);
  }

  delete(r: ResourceType, ns: string | undefined, name: string, opts: DeleteOptions, ctx: WriteContext): DeleteResult {
    const cur = this.peek(r, ns, name);
    if (!cur) throw notFound(r, name);
    const pre = opts.preconditions;
    if (pre?.uid && pre.uid !== cur.metadata.uid) {
      throw conflict(r, name, `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${cur.metadata.uid ?? ''}`);
    }
    if (pre?.resourceVersion && pre.resourceVersion !== cur.metadata.resourceVersion) {
      throw conflict(r, name, `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${cur.metadata.resourceVersion ?? ''}`);
    }
    const next = clone(cur);
    if (opts.propagationPolicy === 'Foreground') next.metadata.finalizers = addUnique(next.metadata.finalizers, 'foregroundDeletion');
    if (opts.propagationPolicy === 'Orphan') next.metadata.finalizers = addUnique(next.metadata.finalizers, 'orphan');
    if (r.kind === 'Namespace' && r.group === '') {
      const status = { ...(isObj(next.status) ? next.status : {}), phase: 'Terminating' };
      next.status = status;
    }
    const grace = cur.metadata.deletionTimestamp ? undefined : this.gracefulDeletion(r, cur, opts);
    if (hasFinalizers(r, next) || grace !== undefined) {
      if (!cur.metadata.deletionTimestamp) {
        next.metadata.deletionTimestamp = nowTimestamp(new Date(Date.now() + (grace ?? 0) * 1000));
        next.metadata.deletionGracePeriodSeconds = grace ?? 0;
      }
      if (deepEqual(next, cur)) return { kind: 'pending', object: clone(cur) };
      if (ctx.dryRun) return { kind: 'pending', object: next };
      return { kind: 'pending', object: this.commit('MODIFIED', r, next, cur, ctx) };
    }
    if (ctx.dryRun) return { kind: 'gone', object: next, status: successStatus(r, name, cur.metadata.uid ?? '') };
    if (!next.metadata.deletionTimestamp) next.metadata.deletionTimestamp = nowTimestamp();
    const gone = this.commit('DELETED', r, next, cur, ctx);
    return { kind: 'gone', object: gone, status: successStatus(r, name, cur.metadata.uid ?? '') };
  }

  /** Test-side lookup by apiVersion/kind. */
  resourceFor(apiVersion: string, kind: string): ResourceType {
    const r = findByKind(apiVersion, kind);
    if (!r) throw new Error(`k8s-testserver does not serve ${apiVersion} ${kind}`);
    return r;
  }
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

const addUnique = (list: string[] | undefined, v: string): string[] => (list?.includes(v) ? list : [...(list ?? []), v]);

/** Metadata finalizers, plus a namespace's `spec.finalizers` (the namespace controller's own). */
export function hasFinalizers(r: ResourceType, obj: KubeObject): boolean {
  if ((obj.metadata.finalizers?.length ?? 0) > 0) return true;
  if (r.kind === 'Namespace' && r.group === '' && isObj(obj.spec) && Array.isArray(obj.spec.finalizers)) return obj.spec.finalizers.length > 0;
  return false;
}

function specChanged(a: KubeObject, b: KubeObject): boolean {
  const strip = (o: KubeObject): Record<string, unknown> => {
    const { metadata: _m, status: _s, ...rest } = o;
    return rest;
  };
  return !deepEqual(strip(a), strip(b));
}

function sameIgnoringTimes(a: KubeObject, b: KubeObject): boolean {
  const norm = (o: KubeObject): KubeObject => {
    const c = clone(o);
    if (c.metadata.managedFields) c.metadata.managedFields = c.metadata.managedFields.map((m) => ({ ...m, time: '' }));
    return c;
  };
  return deepEqual(norm(a), norm(b));
}
