/**
 * Server-side apply field ownership, in the FieldsV1 format the API server writes into
 * `metadata.managedFields` (`f:<field>`, `k:{<list-map key>}`, `v:<set value>`, `.` for an item itself).
 */
import { applyConflict, typedPatchError } from './errors';
import { deepEqual, listKind, sameKey } from './list-semantics';
import { clone, isRecord, nowTimestamp, type FieldsTree, type KubeObject, type ManagedFieldsEntry } from '../types';

export type FieldPath = string[];
export type FieldSet = Map<string, FieldPath>;

const SERVER_OWNED_METADATA = new Set([
  'name', 'namespace', 'uid', 'resourceVersion', 'generation', 'creationTimestamp', 'managedFields',
  'deletionTimestamp', 'deletionGracePeriodSeconds', 'selfLink', 'generateName',
]);

/** Which part of an object a write may touch: the status subresource or everything else. */
export type Scope = 'main' | 'status' | 'all';

const pathKey = (p: FieldPath): string => JSON.stringify(p);

/** Every leaf and every list item of `obj`, as FieldsV1 paths. */
export function fieldsOf(obj: KubeObject, scope: Scope): FieldSet {
  const out: FieldSet = new Map();
  for (const [k, v] of Object.entries(obj)) {
    if (k === 'apiVersion' || k === 'kind' || v === undefined) continue;
    if (scope === 'main' && k === 'status') continue;
    if (scope === 'status' && k !== 'status') continue;
    if (k === 'metadata' && isRecord(v)) {
      for (const [mk, mv] of Object.entries(v)) {
        if (SERVER_OWNED_METADATA.has(mk) || mv === undefined) continue;
        collect(mv, ['f:metadata', `f:${mk}`], mk, out);
      }
      continue;
    }
    collect(v, [`f:${k}`], k, out);
  }
  return out;
}

function collect(v: unknown, path: FieldPath, field: string, out: FieldSet): void {
  if (isRecord(v) && Object.keys(v).length > 0) {
    for (const [k, child] of Object.entries(v)) if (child !== undefined) collect(child, [...path, `f:${k}`], k, out);
    return;
  }
  if (Array.isArray(v) && v.length > 0) {
    const lk = listKind(field, v);
    if (lk.kind === 'set') {
      for (const item of v) out.set(pathKey([...path, `v:${JSON.stringify(item)}`]), [...path, `v:${JSON.stringify(item)}`]);
      return;
    }
    if (lk.kind === 'map' && v.every((item) => lk.keyOf(item) !== undefined)) {
      for (const item of v) {
        const itemPath = [...path, `k:${JSON.stringify(lk.keyOf(item))}`];
        out.set(pathKey([...itemPath, '.']), [...itemPath, '.']);
        if (isRecord(item)) for (const [k, child] of Object.entries(item)) if (child !== undefined) collect(child, [...itemPath, `f:${k}`], k, out);
      }
      return;
    }
  }
  out.set(pathKey(path), path);
}

export function toTree(set: FieldSet): FieldsTree {
  const root: FieldsTree = {};
  const paths = [...set.values()].sort((a, b) => pathKey(a).localeCompare(pathKey(b)));
  for (const p of paths) {
    let node = root;
    for (const step of p) node = node[step] ??= {};
  }
  return root;
}

export function fromTree(tree: FieldsTree | undefined, prefix: FieldPath = [], out: FieldSet = new Map()): FieldSet {
  if (!tree) return out;
  for (const [step, child] of Object.entries(tree)) {
    const p = [...prefix, step];
    if (Object.keys(child).length === 0) out.set(pathKey(p), p);
    else fromTree(child, p, out);
  }
  return out;
}

/** Resolves a FieldsV1 path in an object; `undefined` when absent. */
export function valueAt(obj: unknown, path: FieldPath): unknown {
  let cur: unknown = obj;
  let field = '';
  for (const step of path) {
    if (step === '.') continue;
    if (step.startsWith('f:')) {
      field = step.slice(2);
      cur = isRecord(cur) ? cur[field] : undefined;
    } else if (step.startsWith('k:')) {
      const key = JSON.parse(step.slice(2)) as Record<string, unknown>;
      const arr: unknown[] = Array.isArray(cur) ? cur : [];
      const lk = listKind(field, arr);
      cur = lk.kind === 'map' ? arr.find((item) => sameKey(lk.keyOf(item), key)) : undefined;
    } else if (step.startsWith('v:')) {
      const want: unknown = JSON.parse(step.slice(2));
      cur = Array.isArray(cur) ? cur.find((item) => deepEqual(item, want)) : undefined;
    }
    if (cur === undefined) return undefined;
  }
  return cur;
}

/** Removes the field (or list item) a path names; missing parents are ignored. */
function removeAt(obj: Record<string, unknown>, path: FieldPath): void {
  const steps = path[path.length - 1] === '.' ? path.slice(0, -1) : path;
  const last = steps[steps.length - 1];
  if (last === undefined) return;
  const parentPath = steps.slice(0, -1);
  const parent = valueAt(obj, parentPath);
  if (last.startsWith('f:')) {
    if (isRecord(parent)) delete parent[last.slice(2)];
    return;
  }
  if (!Array.isArray(parent)) return;
  const field = [...parentPath].reverse().find((s) => s.startsWith('f:'))?.slice(2) ?? '';
  let idx = -1;
  if (last.startsWith('k:')) {
    const key = JSON.parse(last.slice(2)) as Record<string, unknown>;
    const lk = listKind(field, parent);
    if (lk.kind === 'map') idx = parent.findIndex((item) => sameKey(lk.keyOf(item), key));
  } else if (last.startsWith('v:')) {
    const want: unknown = JSON.parse(last.slice(2));
    idx = parent.findIndex((item) => deepEqual(item, want));
  }
  if (idx >= 0) parent.splice(idx, 1);
}

/** `[name="c"]`, `[containerPort=80,protocol="TCP"]`, `[="x"]`: a list item as structured-merge-diff prints it. */
const keyText = (key: Record<string, unknown>): string => `[${Object.entries(key).map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(',')}]`;

/**
 * What structured-merge-diff refuses when it types an applied configuration: an associative list
 * (`listType=map` or `set`) with two items under one key. One line per repeated item, in the
 * order the items appear: `.spec.template.spec.containers[name="c"].env: duplicate entries for key
 * [name="FOO"]`. Objects stored by create/update may hold duplicates; only apply refuses them.
 */
export function duplicateKeyErrors(obj: KubeObject): string[] {
  const errors: string[] = [];
  for (const [k, v] of Object.entries(obj)) {
    if (k === 'apiVersion' || k === 'kind') continue;
    if (k === 'metadata' && isRecord(v)) {
      for (const [mk, mv] of Object.entries(v)) if (mk !== 'managedFields') walkDuplicates(mv, `.metadata.${mk}`, mk, errors);
      continue;
    }
    walkDuplicates(v, `.${k}`, k, errors);
  }
  return errors;
}

function walkDuplicates(v: unknown, path: string, field: string, errors: string[]): void {
  if (isRecord(v)) {
    for (const [k, child] of Object.entries(v)) walkDuplicates(child, `${path}.${k}`, k, errors);
    return;
  }
  if (!Array.isArray(v)) return;
  const items = v as unknown[];
  const lk = listKind(field, items);
  const seen = new Set<string>();
  items.forEach((item, i) => {
    let itemPath = `${path}[${i}]`;
    if (lk.kind !== 'atomic') {
      const key = lk.kind === 'map' ? lk.keyOf(item) : undefined;
      if (lk.kind === 'set' || key !== undefined) {
        const text = key ? keyText(key) : `[=${JSON.stringify(item)}]`;
        if (seen.has(text)) errors.push(`${path}: duplicate entries for key ${text}`);
        seen.add(text);
        itemPath = `${path}${text}`;
      }
    }
    walkDuplicates(item, itemPath, '', errors);
  });
}

/** Marks a live item whose key occurs more than once: apply replaces it rather than merging into it. */
const DUPLICATED = Symbol('duplicated');

/**
 * Merges two associative lists the way structured-merge-diff does (`mergingWalker.visitListItems`):
 * the applied items come out in the applied order; live items the configuration does not mention
 * stay where they were relative to the items around them; an item in both is merged in place of
 * the applied one. `idOf` names an item's key (live items without one are kept, applied items
 * without one are added).
 */
function mergeAssociative(live: unknown[], applied: unknown[], idOf: (item: unknown) => string | undefined): unknown[] {
  const lIds = live.map((item, i) => idOf(item) ?? `live#${i}`);
  const rIds = applied.map((item, i) => idOf(item) ?? `applied#${i}`);
  const observedL = new Map<string, unknown>();
  lIds.forEach((id, i) => observedL.set(id, observedL.has(id) ? DUPLICATED : live[i]));
  const observedR = new Map<string, unknown>();
  rIds.forEach((id, i) => {
    if (!observedR.has(id)) observedR.set(id, applied[i]);
  });
  const sharedOrder = rIds.filter((id) => observedL.has(id));
  let shared = 0;
  let nextShared = sharedOrder[shared++];
  const mergedR = new Set<string>();
  const out: unknown[] = [];
  const mergeItem = (id: string): unknown => {
    const l = observedL.get(id);
    const r = observedR.get(id);
    return l === undefined || l === DUPLICATED ? clone(r) : mergeApplied(l, r);
  };
  let lI = 0;
  let rI = 0;
  while (lI < lIds.length || rI < rIds.length) {
    const lId = lIds[lI];
    const rId = rIds[rI];
    if (lId !== undefined && rId !== undefined) {
      if (lId === rId) {
        mergedR.add(lId);
        out.push(mergeItem(lId));
        lI++;
        rI++;
        nextShared = sharedOrder[shared++];
        continue;
      }
      // Shared with the configuration, but not the shared item due next: it is placed when the
      // applied list reaches it.
      if (observedR.has(lId) && nextShared !== undefined && nextShared !== lId) {
        lI++;
        continue;
      }
    }
    if (lId !== undefined) {
      if (!observedR.has(lId)) {
        out.push(clone(live[lI]));
        lI++;
        continue;
      }
      if (mergedR.has(lId)) {
        lI++;
        continue;
      }
    }
    if (rId !== undefined) {
      if (!mergedR.has(rId)) out.push(mergeItem(rId));
      mergedR.add(rId);
      rI++;
      if (nextShared !== undefined && nextShared === rId) nextShared = sharedOrder[shared++];
    }
  }
  return out;
}

/**
 * Merges an applied configuration into the live object: maps recursively, keyed lists and sets
 * by key in structured-merge-diff's order (see `mergeAssociative`), anything else replaced.
 */
export function mergeApplied(live: unknown, applied: unknown, field = ''): unknown {
  if (isRecord(live) && isRecord(applied)) {
    const out: Record<string, unknown> = { ...live };
    for (const [k, v] of Object.entries(applied)) out[k] = v === null ? undefined : mergeApplied(live[k], v, k);
    for (const k of Object.keys(out)) if (out[k] === undefined) delete out[k];
    return out;
  }
  if (Array.isArray(live) && Array.isArray(applied)) {
    const liveItems = live as unknown[];
    const appliedItems = applied as unknown[];
    const lk = listKind(field, [...liveItems, ...appliedItems]);
    if (lk.kind === 'set') return mergeAssociative(liveItems, appliedItems, (item) => JSON.stringify(item));
    if (lk.kind === 'map') {
      return mergeAssociative(liveItems, appliedItems, (item) => {
        const key = lk.keyOf(item);
        return key === undefined ? undefined : JSON.stringify(key);
      });
    }
  }
  return clone(applied);
}

interface Owned {
  entry: ManagedFieldsEntry;
  set: FieldSet;
}

const ownedOf = (obj: KubeObject): Owned[] => (obj.metadata.managedFields ?? []).map((entry) => ({ entry, set: fromTree(entry.fieldsV1) }));

function writeOwned(obj: KubeObject, owned: Owned[]): void {
  const entries = owned.filter((o) => o.set.size > 0).map((o) => ({ ...o.entry, fieldsV1: toTree(o.set) }));
  if (entries.length > 0) obj.metadata.managedFields = entries;
  else delete obj.metadata.managedFields;
}

const isPrefix = (prefix: FieldPath, p: FieldPath): boolean => prefix.length <= p.length && prefix.every((s, i) => s === p[i]);

/** Human form of a path for conflict messages: `.spec.replicas`, `.spec.containers[name="c"].image`. */
export function describePath(p: FieldPath): string {
  let out = '';
  for (const step of p) {
    if (step === '.') continue;
    if (step.startsWith('f:')) out += `.${step.slice(2)}`;
    else if (step.startsWith('k:')) {
      out += keyText(JSON.parse(step.slice(2)) as Record<string, unknown>);
    } else if (step.startsWith('v:')) out += `[${step.slice(2)}]`;
  }
  return out;
}

/**
 * Server-side apply of `applied` by `manager` onto `live` (undefined when creating). Returns the new
 * object with `managedFields` updated, or throws a 409 naming every conflicting field.
 */
export function serverSideApply(
  live: KubeObject,
  applied: KubeObject,
  opts: { manager: string; force: boolean; scope: Scope; subresource?: string },
): KubeObject {
  const duplicates = duplicateKeyErrors(applied);
  if (duplicates.length > 0) {
    throw typedPatchError({ apiVersion: applied.apiVersion, kind: applied.kind, namespace: applied.metadata.namespace, name: applied.metadata.name }, duplicates);
  }
  const appliedSet = fieldsOf(applied, opts.scope);
  const owned = ownedOf(live);
  const subresource = opts.subresource;
  const isMine = (o: Owned): boolean => o.entry.manager === opts.manager && o.entry.operation === 'Apply' && o.entry.subresource === subresource;
  const mine = owned.find(isMine);
  const conflicts: { manager: string; apiVersion: string; field: string; key: string }[] = [];
  for (const other of owned) {
    if (other === mine) continue;
    for (const [key, p] of appliedSet) {
      if (p[p.length - 1] === '.' || !other.set.has(key)) continue;
      const liveValue = valueAt(live, p);
      if (liveValue !== undefined && !deepEqual(liveValue, valueAt(applied, p))) {
        conflicts.push({ manager: other.entry.manager, apiVersion: other.entry.apiVersion, field: describePath(p), key });
      }
    }
  }
  if (conflicts.length > 0 && !opts.force) throw applyConflict(conflicts);
  for (const c of conflicts) for (const o of owned) if (o !== mine && o.entry.manager === c.manager) o.set.delete(c.key);

  const next = clone(live) as KubeObject & Record<string, unknown>;
  if (mine) {
    const removed = [...mine.set].filter(([k]) => !appliedSet.has(k)).map(([, p]) => p).sort((a, b) => b.length - a.length);
    for (const p of removed) {
      const ownedByOthers = owned.some((o) => o !== mine && [...o.set.values()].some((q) => isPrefix(p[p.length - 1] === '.' ? p.slice(0, -1) : p, q)));
      if (!ownedByOthers) removeAt(next, p);
    }
  }
  const { apiVersion: _a, kind: _k, metadata: appliedMeta, ...body } = applied;
  const meta = { ...appliedMeta };
  for (const k of SERVER_OWNED_METADATA) delete (meta as Record<string, unknown>)[k];
  const filteredBody: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(body)) {
    if (opts.scope === 'main' && k === 'status') continue;
    if (opts.scope === 'status' && k !== 'status') continue;
    filteredBody[k] = v;
  }
  const merged = mergeApplied(next, { ...filteredBody, metadata: meta }) as KubeObject;
  const entry: ManagedFieldsEntry = {
    manager: opts.manager,
    operation: 'Apply',
    apiVersion: applied.apiVersion,
    time: nowTimestamp(),
    fieldsType: 'FieldsV1',
    fieldsV1: {},
    ...(subresource ? { subresource } : {}),
  };
  const rest = owned.filter((o) => o !== mine);
  writeOwned(merged, [...rest, { entry, set: appliedSet }]);
  return merged;
}

/**
 * Ownership after a non-apply write (create, update, patch): fields whose value changed move to
 * `manager` (operation Update); removed fields leave every manager.
 */
export function recordUpdate(before: KubeObject | undefined, after: KubeObject, manager: string, scope: Scope, subresource?: string): void {
  const oldSet = before ? fieldsOf(before, scope) : new Map<string, FieldPath>();
  const newSet = fieldsOf(after, scope);
  const changed: FieldSet = new Map();
  for (const [k, p] of newSet) {
    if (!oldSet.has(k) || (p[p.length - 1] !== '.' && !deepEqual(valueAt(before, p), valueAt(after, p)))) changed.set(k, p);
  }
  const removed = [...oldSet.keys()].filter((k) => !newSet.has(k));
  const owned = ownedOf(before ?? after);
  if (!before) owned.length = 0;
  for (const o of owned) {
    for (const k of removed) o.set.delete(k);
    if (o.entry.manager !== manager || o.entry.operation !== 'Update') for (const k of changed.keys()) o.set.delete(k);
  }
  if (changed.size > 0) {
    let mine = owned.find((o) => o.entry.manager === manager && o.entry.operation === 'Update' && o.entry.subresource === subresource);
    if (!mine) {
      mine = {
        entry: { manager, operation: 'Update', apiVersion: after.apiVersion, time: '', fieldsType: 'FieldsV1', fieldsV1: {}, ...(subresource ? { subresource } : {}) },
        set: new Map(),
      };
      owned.push(mine);
    }
    mine.entry = { ...mine.entry, time: nowTimestamp() };
    for (const [k, p] of changed) mine.set.set(k, p);
  }
  writeOwned(after, owned);
}
