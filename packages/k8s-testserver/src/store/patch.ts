import { unprocessable } from './errors';
import { deepEqual, listKind, sameKey } from './list-semantics';
import { clone, isRecord } from '../types';

/** RFC 7386 JSON merge patch. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isRecord(patch)) return clone(patch);
  const out: Record<string, unknown> = isRecord(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

/**
 * Strategic merge patch, the subset controllers use: keyed lists merge by their key, `finalizers`
 * merges as a set, `$patch: delete|replace` on maps and list items, and
 * `$deleteFromPrimitiveList/<field>`. Other lists are replaced, as for fields without a patch strategy.
 */
export function strategicMergePatch(target: unknown, patch: unknown, field = ''): unknown {
  if (Array.isArray(patch)) return mergeList(Array.isArray(target) ? target : [], patch, field);
  if (!isRecord(patch)) return clone(patch);
  if (patch.$patch === 'replace') {
    const { $patch: _ignored, ...rest } = patch;
    return clone(rest);
  }
  if (patch.$patch === 'delete') return undefined;
  const out: Record<string, unknown> = isRecord(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (k === '$patch' || k === '$retainKeys' || k.startsWith('$setElementOrder/')) continue;
    if (k.startsWith('$deleteFromPrimitiveList/')) {
      const f = k.slice('$deleteFromPrimitiveList/'.length);
      const remove = Array.isArray(v) ? v : [];
      const cur = out[f];
      if (Array.isArray(cur)) out[f] = cur.filter((x) => !remove.some((r) => deepEqual(r, x)));
      continue;
    }
    if (v === null) {
      delete out[k];
      continue;
    }
    const merged = strategicMergePatch(out[k], v, k);
    if (merged === undefined) delete out[k];
    else out[k] = merged;
  }
  return out;
}

function mergeList(target: unknown[], patch: unknown[], field: string): unknown[] {
  const lk = listKind(field, [...target, ...patch]);
  if (lk.kind === 'set') {
    const out = [...target];
    for (const p of patch) if (!out.some((x) => deepEqual(x, p))) out.push(clone(p));
    return out;
  }
  if (lk.kind === 'atomic') return clone(patch);
  const out = [...target];
  for (const item of patch) {
    const key = lk.keyOf(item);
    const idx = out.findIndex((x) => sameKey(lk.keyOf(x), key));
    if (isRecord(item) && item.$patch === 'delete') {
      if (idx >= 0) out.splice(idx, 1);
      continue;
    }
    if (idx >= 0) out[idx] = strategicMergePatch(out[idx], item);
    else out.push(strategicMergePatch(undefined, item));
  }
  return out;
}

interface JsonPatchOp {
  op: string;
  path: string;
  from?: string;
  value?: unknown;
}

const decodePointer = (p: string): string[] => {
  if (p === '') return [];
  if (!p.startsWith('/')) throw unprocessable(`the server rejected our request due to an error in our request: invalid JSON pointer "${p}"`);
  return p.slice(1).split('/').map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
};

/** RFC 6902 JSON patch (add, remove, replace, move, copy, test). */
export function jsonPatch(target: unknown, ops: unknown): unknown {
  if (!Array.isArray(ops)) throw unprocessable('the server rejected our request due to an error in our request: json patch must be an array');
  let doc = clone(target);
  for (const raw of ops) {
    if (!isRecord(raw) || typeof raw.op !== 'string' || typeof raw.path !== 'string') {
      throw unprocessable('the server rejected our request due to an error in our request: invalid json patch operation');
    }
    const op = raw as unknown as JsonPatchOp;
    const path = decodePointer(op.path);
    switch (op.op) {
      case 'add':
        doc = setAt(doc, path, clone(op.value), 'add');
        break;
      case 'replace':
        getAt(doc, path, op.path);
        doc = setAt(doc, path, clone(op.value), 'replace');
        break;
      case 'remove':
        getAt(doc, path, op.path);
        doc = removeAt(doc, path);
        break;
      case 'move': {
        const from = decodePointer(op.from ?? '');
        const v = getAt(doc, from, op.from ?? '');
        doc = setAt(removeAt(doc, from), path, v, 'add');
        break;
      }
      case 'copy': {
        const v = getAt(doc, decodePointer(op.from ?? ''), op.from ?? '');
        doc = setAt(doc, path, clone(v), 'add');
        break;
      }
      case 'test': {
        const v = getAt(doc, path, op.path);
        if (!deepEqual(v, op.value)) throw unprocessable(`the server rejected our request due to an error in our request: testing value ${op.path} failed`);
        break;
      }
      default:
        throw unprocessable(`the server rejected our request due to an error in our request: Unexpected kind: ${op.op}`);
    }
  }
  return doc;
}

function getAt(doc: unknown, path: string[], raw: string): unknown {
  let cur = doc;
  for (const step of path) {
    if (Array.isArray(cur)) cur = cur[Number(step)];
    else if (isRecord(cur)) cur = cur[step];
    else cur = undefined;
    if (cur === undefined) throw unprocessable(`the server rejected our request due to an error in our request: doc is missing path: "${raw}"`);
  }
  return cur;
}

function setAt(doc: unknown, path: string[], value: unknown, mode: 'add' | 'replace'): unknown {
  if (path.length === 0) return value;
  const [head, ...rest] = path as [string, ...string[]];
  if (Array.isArray(doc)) {
    const out = [...(doc as unknown[])];
    if (rest.length === 0) {
      const idx = head === '-' ? out.length : Number(head);
      if (mode === 'add') out.splice(idx, 0, value);
      else out[idx] = value;
      return out;
    }
    out[Number(head)] = setAt(out[Number(head)], rest, value, mode);
    return out;
  }
  if (!isRecord(doc)) throw unprocessable(`the server rejected our request due to an error in our request: doc is missing path: "/${path.join('/')}"`);
  return { ...doc, [head]: rest.length === 0 ? value : setAt(doc[head], rest, value, mode) };
}

function removeAt(doc: unknown, path: string[]): unknown {
  const [head, ...rest] = path as [string, ...string[]];
  if (Array.isArray(doc)) {
    const out = [...(doc as unknown[])];
    if (rest.length === 0) out.splice(Number(head), 1);
    else out[Number(head)] = removeAt(out[Number(head)], rest);
    return out;
  }
  if (!isRecord(doc)) return doc;
  const out = { ...doc };
  if (rest.length === 0) delete out[head];
  else out[head] = removeAt(out[head], rest);
  return out;
}
