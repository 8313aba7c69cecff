import { type Sink } from './violations';
import * as m_violations from './violations';
import * as m_network from './network';

// Hot-path helpers bound once: transpilers (tsx/esbuild) turn imported names into getter
// calls on every use, which cost ~10% of a resolution. Locals are plain calls.
const { addViolation, idx, join, joinKey, mapKey, show, typeName } = m_violations;
const { isObj } = m_network;

/**
 * Small typed readers for the hand-written request checker. Paths are built only when a
 * violation is reported, so a valid request pays no string concatenation for them.
 */

export function checkKeys(
  obj: Record<string, unknown>,
  allowed: ReadonlySet<string>,
  path: string,
  sink: Sink,
): void {
  for (const k in obj) {
    if (!allowed.has(k)) {
      const hint = k.includes('_') ? ' (JSON fields are camelCase)' : '';
      addViolation(sink, joinKey(path, k), 'unknown_field', `unknown field ${show(k)}${hint}`);
    }
  }
}

export function readObject(
  obj: Record<string, unknown>,
  key: string,
  path: string,
  sink: Sink,
): Record<string, unknown> | undefined {
  const v = obj[key];
  if (v === undefined) return undefined;
  if (!isObj(v)) {
    addViolation(sink, join(path, key), 'type', `expected an object, got ${typeName(v)}`);
    return undefined;
  }
  return v;
}

export function readString(
  obj: Record<string, unknown>,
  key: string,
  path: string,
  sink: Sink,
): string | undefined {
  const v = obj[key];
  if (v === undefined) return undefined;
  if (typeof v !== 'string') {
    addViolation(sink, join(path, key), 'type', `expected a string, got ${typeName(v)}`);
    return undefined;
  }
  return v;
}

export function readBool(
  obj: Record<string, unknown>,
  key: string,
  path: string,
  sink: Sink,
): boolean | undefined {
  const v = obj[key];
  if (v === undefined) return undefined;
  if (typeof v !== 'boolean') {
    addViolation(sink, join(path, key), 'type', `expected a boolean, got ${typeName(v)}`);
    return undefined;
  }
  return v;
}

/** int64 as a JSON number or a decimal string (proto3 JSON). */
export function readInt(
  obj: Record<string, unknown>,
  key: string,
  path: string,
  sink: Sink,
): number | undefined {
  const v = obj[key];
  if (v === undefined) return undefined;
  let n: number | undefined;
  if (typeof v === 'number' && Number.isSafeInteger(v)) n = v;
  else if (typeof v === 'string' && /^-?\d{1,16}$/.test(v)) n = Number(v);
  if (n === undefined || !Number.isSafeInteger(n)) {
    addViolation(
      sink,
      join(path, key),
      'type',
      `expected an integer (number or decimal string), got ${show(v)}`,
      { requested: v },
    );
    return undefined;
  }
  return n;
}

export function readStringArray(
  obj: Record<string, unknown>,
  key: string,
  path: string,
  sink: Sink,
): string[] | undefined {
  const v = obj[key];
  if (v === undefined) return undefined;
  if (!Array.isArray(v)) {
    addViolation(sink, join(path, key), 'type', `expected a list of strings, got ${typeName(v)}`);
    return undefined;
  }
  for (let i = 0; i < v.length; i++) {
    if (typeof v[i] !== 'string') {
      addViolation(
        sink,
        `${join(path, key)}[${i}]`,
        'type',
        `expected a string, got ${typeName(v[i])}`,
      );
      return undefined;
    }
  }
  return v as string[];
}

export function readStringMap(
  obj: Record<string, unknown>,
  key: string,
  path: string,
  sink: Sink,
): Record<string, string> | undefined {
  const v = obj[key];
  if (v === undefined) return undefined;
  if (!isObj(v)) {
    addViolation(sink, join(path, key), 'type', `expected a map of strings, got ${typeName(v)}`);
    return undefined;
  }
  let ok = true;
  for (const k in v) {
    if (typeof v[k] !== 'string') {
      addViolation(
        sink,
        mapKey(join(path, key), k),
        'type',
        `expected a string value, got ${typeName(v[k])}`,
      );
      ok = false;
    }
  }
  return ok ? (v as Record<string, string>) : undefined;
}

export function readArray(
  obj: Record<string, unknown>,
  key: string,
  path: string,
  sink: Sink,
  max: number,
): unknown[] | undefined {
  const v = obj[key];
  if (v === undefined) return undefined;
  if (!Array.isArray(v)) {
    addViolation(sink, join(path, key), 'type', `expected a list, got ${typeName(v)}`);
    return undefined;
  }
  if (v.length > max) {
    addViolation(sink, join(path, key), 'max_items', `at most ${max} entries, got ${v.length}`, {
      requested: v.length,
      limit: max,
    });
    return undefined;
  }
  return v as unknown[];
}

/** A list of objects (passed through by the engine, shape-checked so the contract holds). */
export function readRecordList(
  obj: Record<string, unknown>,
  key: string,
  path: string,
  sink: Sink,
): Record<string, unknown>[] | undefined {
  const v = obj[key];
  if (v === undefined) return undefined;
  if (!Array.isArray(v)) {
    addViolation(sink, join(path, key), 'type', `expected a list of objects, got ${typeName(v)}`);
    return undefined;
  }
  for (let i = 0; i < v.length; i++) {
    if (!isObj(v[i])) {
      addViolation(sink, idx(join(path, key), i), 'type', `expected an object, got ${typeName(v[i])}`);
      return undefined;
    }
  }
  return v as Record<string, unknown>[];
}
