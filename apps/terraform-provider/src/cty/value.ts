/**
 * Terraform's type system (cty) as plain data. A type is written exactly as Terraform spells it
 * in JSON (`"string"`, `["list","string"]`, `["object",{"a":"number"}]`), so the schema's type
 * bytes are `JSON.stringify(type)`. A value is plain JSON-like data plus {@link UNKNOWN}, the
 * placeholder for "known after apply".
 */
export type CtyPrimitive = 'string' | 'number' | 'bool';
export type CtyType =
  | CtyPrimitive
  | readonly ['list', CtyType]
  | readonly ['set', CtyType]
  | readonly ['map', CtyType]
  | readonly ['object', { readonly [name: string]: CtyType }];

/** A value not known until apply. Terraform sends it as msgpack extension 0 (or 12, refined). */
export const UNKNOWN: unique symbol = Symbol('unknown');
export type Unknown = typeof UNKNOWN;

export type Value = null | Unknown | string | number | boolean | Value[] | ValueObject;
export interface ValueObject {
  [name: string]: Value;
}

export const isUnknown = (v: unknown): v is Unknown => v === UNKNOWN;

export const isObjectValue = (v: Value | undefined): v is ValueObject =>
  v !== null && v !== undefined && typeof v === 'object' && !Array.isArray(v);

/** True when neither the value nor anything inside it is unknown. */
export function isWhollyKnown(v: Value): boolean {
  if (v === UNKNOWN) return false;
  if (Array.isArray(v)) return v.every(isWhollyKnown);
  if (isObjectValue(v)) return Object.values(v).every(isWhollyKnown);
  return true;
}

/** The attribute `name` of an object value, `null` when the value is null, unknown or not an object. */
export function attr(v: Value | undefined, name: string): Value {
  return isObjectValue(v) ? (v[name] ?? null) : null;
}

/**
 * Structural equality of two values of the same type. Sets compare without order; an unknown
 * equals nothing (not even another unknown), since it may become anything.
 */
export function valuesEqual(type: CtyType, a: Value, b: Value): boolean {
  if (a === UNKNOWN || b === UNKNOWN) return false;
  if (a === null || b === null) return a === b;
  if (typeof type === 'string') return a === b;
  const [kind, inner] = type;
  switch (kind) {
    case 'list':
      return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => valuesEqual(inner, x, b[i] ?? null));
    case 'set':
      return (
        Array.isArray(a) &&
        Array.isArray(b) &&
        a.length === b.length &&
        a.every((x) => b.some((y) => valuesEqual(inner, x, y))) &&
        b.every((y) => a.some((x) => valuesEqual(inner, x, y)))
      );
    case 'map': {
      if (!isObjectValue(a) || !isObjectValue(b)) return false;
      const ka = Object.keys(a);
      return ka.length === Object.keys(b).length && ka.every((k) => k in b && valuesEqual(inner, a[k] ?? null, b[k] ?? null));
    }
    case 'object':
      return isObjectValue(a) && isObjectValue(b) && Object.entries(inner).every(([k, t]) => valuesEqual(t, a[k] ?? null, b[k] ?? null));
  }
}

/**
 * Shapes a decoded value to its type: every object gets every attribute of its type (absent
 * ones become null) and no others. Terraform's decoder requires objects to be complete, and
 * code reading values can then rely on every attribute being present.
 */
export function conform(type: CtyType, v: Value | undefined): Value {
  if (v === undefined || v === null) return null;
  if (v === UNKNOWN) return UNKNOWN;
  if (typeof type === 'string') return v;
  const [kind, inner] = type;
  switch (kind) {
    case 'list':
    case 'set':
      return Array.isArray(v) ? v.map((x) => conform(inner, x)) : v;
    case 'map': {
      if (!isObjectValue(v)) return v;
      const out: ValueObject = {};
      for (const [k, x] of Object.entries(v)) define(out, k, conform(inner, x));
      return out;
    }
    case 'object': {
      if (!isObjectValue(v)) return v;
      const out: ValueObject = {};
      for (const [k, t] of Object.entries(inner)) define(out, k, conform(t, v[k]));
      return out;
    }
  }
}

/** Sets a key even when it is `__proto__` (a map key a user may choose). */
export function define(o: ValueObject, k: string, v: Value): void {
  if (k === '__proto__') Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
  else o[k] = v;
}
