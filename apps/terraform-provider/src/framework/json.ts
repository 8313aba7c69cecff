/** JSON helpers for attributes that hold JSON text: equality by meaning, and one canonical spelling. */

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

/** Equal as JSON values: object key order and whitespace do not matter. */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => jsonEqual(x, b[i]));
  const ao = a as Record<string, unknown>;
  const bo = b as Record<string, unknown>;
  const ka = Object.keys(ao).filter((k) => ao[k] !== undefined);
  const kb = Object.keys(bo).filter((k) => bo[k] !== undefined);
  return ka.length === kb.length && ka.every((k) => Object.prototype.hasOwnProperty.call(bo, k) && jsonEqual(ao[k], bo[k]));
}

function sorted(v: unknown): Json {
  if (Array.isArray(v)) return v.map(sorted);
  if (v !== null && typeof v === 'object') {
    const out: { [k: string]: Json } = {};
    for (const k of Object.keys(v).sort()) {
      const x = (v as Record<string, unknown>)[k];
      if (x !== undefined) out[k] = sorted(x);
    }
    return out;
  }
  return v as Json;
}

/** Compact JSON with object keys in lexical order: what Terraform's `jsonencode` writes for plain data. */
export function canonicalJson(v: unknown): string {
  return JSON.stringify(sorted(v));
}

/** The parsed JSON text, or `undefined` when it is not JSON. */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** True for a JSON text whose value is an object (not an array, string or null). */
export function isJsonObjectText(text: string): boolean {
  const v = parseJson(text);
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}
