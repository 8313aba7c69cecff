import { UNKNOWN, attr, define, isObjectValue, type Value, type ValueObject } from '../cty/value';
import { canonicalJson, jsonEqual, parseJson } from './json';
import type { Attribute, Attributes } from './schema';
import type { PathStep } from './diagnostics';

/**
 * Conversion between Terraform values of a schema and the REST API's camelCase JSON, driven by
 * the schema alone: snake_case attribute names become camelCase keys, user-chosen map keys are
 * kept verbatim, JSON-string attributes are parsed or compared by meaning.
 *
 * Reading back is told what Terraform currently holds (`hint`: the plan on apply, the prior
 * state on refresh) so that a value the API spells differently but means the same (JSON with
 * other spacing, `""` for an unset string) keeps Terraform's spelling: otherwise every apply
 * would report an inconsistent result and every refresh a false drift.
 */

type Json = unknown;

export const apiKey = (name: string, a: Attribute): string => a.wire?.key ?? name.replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase());

/** Why a value could not be sent: a value that is still unknown at apply is a provider bug. */
export class UnknownValueError extends Error {}

function attributeToApi(a: Attribute, v: Value): Json {
  if (v === UNKNOWN) throw new UnknownValueError('a value that is still unknown cannot be sent to the API');
  if (v === null) return undefined;
  switch (a.kind) {
    case 'string':
      if (a.wire?.json === 'document') {
        const parsed = parseJson(v as string);
        // Validation refuses non-JSON text before apply; this keeps a bad value from being sent as a string.
        if (parsed === undefined) throw new Error('a JSON attribute holds text that is not JSON');
        return parsed;
      }
      return v;
    case 'number':
    case 'bool':
      return v;
    case 'list':
    case 'set':
      return (v as Value[]).map((x) => {
        if (x === UNKNOWN) throw new UnknownValueError('a value that is still unknown cannot be sent to the API');
        return x;
      });
    case 'map':
      return { ...(v as ValueObject) };
    case 'nested':
      if (a.nesting === 'single') return toApi(a.attributes, v);
      if (a.nesting === 'list' || a.nesting === 'set') return (v as Value[]).map((x) => toApi(a.attributes, x));
      return Object.fromEntries(Object.entries(v as ValueObject).map(([k, x]) => [k, toApi(a.attributes, x)]));
  }
}

/** A Terraform object value as the API's JSON object; null attributes are left out. */
export function toApi(attributes: Attributes, v: Value): Record<string, Json> {
  const out: Record<string, Json> = {};
  if (!isObjectValue(v)) return out;
  for (const [name, a] of Object.entries(attributes)) {
    const x = attributeToApi(a, v[name] ?? null);
    if (x !== undefined) out[apiKey(name, a)] = x;
  }
  return out;
}

const asString = (raw: Json): string => (typeof raw === 'string' ? raw : JSON.stringify(raw));
const asNumber = (raw: Json): number | null => {
  const n = typeof raw === 'number' ? raw : typeof raw === 'string' && raw.trim() !== '' ? Number(raw) : NaN;
  return Number.isFinite(n) ? n : null;
};

function attributeFromApi(a: Attribute, raw: Json, hint: Value): Value {
  if (raw === undefined || raw === null) return null;
  if (a.wire?.unsetWhen !== undefined && hint === null && jsonEqual(raw, a.wire.unsetWhen)) return null;
  switch (a.kind) {
    case 'string': {
      if (a.wire?.json === 'document') {
        return typeof hint === 'string' && jsonEqual(parseJson(hint), raw) ? hint : canonicalJson(raw);
      }
      const text = asString(raw);
      if (a.wire?.json === 'text' && typeof hint === 'string' && hint !== text) {
        const h = parseJson(hint);
        if (h !== undefined && jsonEqual(h, parseJson(text))) return hint;
      }
      return text;
    }
    case 'number':
      return asNumber(raw);
    case 'bool':
      return raw === true || raw === 'true';
    case 'list':
    case 'set': {
      if (!Array.isArray(raw)) return null;
      const items = raw.map((x) => (a.element === 'number' ? asNumber(x) : a.element === 'bool' ? x === true : asString(x)));
      return a.kind === 'set' ? [...new Set(items)] : items;
    }
    case 'map': {
      if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return null;
      const out: ValueObject = {};
      for (const [k, x] of Object.entries(raw as Record<string, Json>)) define(out, k, asString(x));
      return out;
    }
    case 'nested': {
      if (a.nesting === 'single') return fromApi(a.attributes, raw, hint);
      if (a.nesting === 'list' || a.nesting === 'set') {
        if (!Array.isArray(raw)) return null;
        const hints = Array.isArray(hint) ? hint : [];
        return raw.map((x, i) => fromApi(a.attributes, x, hints[i] ?? null));
      }
      if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return null;
      const out: ValueObject = {};
      for (const [k, x] of Object.entries(raw as Record<string, Json>)) define(out, k, fromApi(a.attributes, x, attr(hint, k)));
      return out;
    }
  }
}

/** The API's JSON object as a Terraform object value of `attributes` (absent keys are null). */
export function fromApi(attributes: Attributes, raw: Json, hint: Value): ValueObject | null {
  if (raw === null || raw === undefined || typeof raw !== 'object' || Array.isArray(raw)) return null;
  const src = raw as Record<string, Json>;
  const out: ValueObject = {};
  for (const [name, a] of Object.entries(attributes)) out[name] = attributeFromApi(a, src[apiKey(name, a)], attr(hint, name));
  return out;
}

/** `constraints.allowedEgress[0].cidr` → `['constraints', 'allowedEgress', 0, 'cidr']`. */
export function splitApiPath(path: string): (string | number)[] {
  const out: (string | number)[] = [];
  for (const m of path.matchAll(/([^.[\]]+)|\[(\d+)\]/g)) out.push(m[2] !== undefined ? Number(m[2]) : (m[1] ?? ''));
  return out;
}

/**
 * The Terraform attribute path of an API field path (camelCase keys, list indexes), walking the
 * schema. The walk stops where Terraform cannot address further (inside a set, a JSON attribute,
 * or a key the schema does not know), so a diagnostic still points at the nearest attribute.
 */
export function attributePathOf(attributes: Attributes, apiPath: readonly (string | number)[]): PathStep[] {
  const out: PathStep[] = [];
  let scope: Attributes | undefined = attributes;
  let current: Attribute | undefined;
  for (const seg of apiPath) {
    if (typeof seg === 'number') {
      if (current?.kind === 'list' || (current?.kind === 'nested' && current.nesting === 'list')) {
        out.push(seg);
        continue;
      }
      break;
    }
    if (current?.kind === 'map' || (current?.kind === 'nested' && current.nesting === 'map')) {
      out.push({ key: seg });
      scope = current.kind === 'nested' ? current.attributes : undefined;
      current = undefined;
      continue;
    }
    if (current && current.kind !== 'nested') break;
    if (current?.kind === 'nested') scope = current.attributes;
    const entry: [string, Attribute] | undefined = scope ? Object.entries(scope).find(([name, a]) => apiKey(name, a) === seg || name === seg) : undefined;
    if (!entry) break;
    out.push(entry[0]);
    current = entry[1];
  }
  return out;
}
