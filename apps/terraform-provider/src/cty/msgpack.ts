import { ExtData, ExtensionCodec, decode, encode } from '@msgpack/msgpack';
import { UNKNOWN, conform, isObjectValue, type CtyType, type Value, type ValueObject } from './value';

/**
 * cty's msgpack encoding, the form of every DynamicValue Terraform exchanges with providers.
 * Unknown values are msgpack extension type 0 (Terraform writes one zero byte of payload), and
 * refined unknowns ("unknown, but not null", "a string starting with...") are extension 12:
 * this provider reads both as plain unknown and only ever writes type 0.
 */
const EXT_UNKNOWN = 0;
const EXT_REFINED_UNKNOWN = 12;

const codec = new ExtensionCodec();
codec.register({
  type: EXT_UNKNOWN,
  encode: (v: unknown) => (v === UNKNOWN ? new Uint8Array([0]) : null),
  decode: () => UNKNOWN,
});
codec.register({ type: EXT_REFINED_UNKNOWN, encode: () => null, decode: () => UNKNOWN });

function plain(raw: unknown): Value {
  if (raw === UNKNOWN || raw === null || raw === undefined) return raw === UNKNOWN ? UNKNOWN : null;
  if (typeof raw === 'string' || typeof raw === 'number' || typeof raw === 'boolean') return raw;
  if (typeof raw === 'bigint') return Number(raw);
  if (raw instanceof ExtData) throw new Error(`unexpected msgpack extension ${raw.type}`);
  if (Array.isArray(raw)) return raw.map(plain);
  if (raw instanceof Map) {
    const out: ValueObject = {};
    for (const [k, v] of raw) out[String(k)] = plain(v);
    return out;
  }
  if (typeof raw === 'object') {
    const out: ValueObject = {};
    for (const [k, v] of Object.entries(raw)) out[k] = plain(v);
    return out;
  }
  throw new Error(`unsupported msgpack value of type ${typeof raw}`);
}

/** Decodes a DynamicValue's msgpack bytes as a value of `type`; empty bytes are null. */
export function decodeValue(type: CtyType, bytes: Uint8Array | undefined): Value {
  if (!bytes || bytes.length === 0) return null;
  return conform(type, plain(decode(bytes, { extensionCodec: codec, useBigInt64: false })));
}

/** Numbers Terraform would refuse as msgpack floats (NaN, infinities) never reach it. */
function encodable(type: CtyType, v: Value): unknown {
  if (v === null || v === UNKNOWN) return v;
  if (typeof type === 'string') {
    if (type === 'number' && typeof v === 'number' && !Number.isFinite(v)) throw new Error(`number ${v} cannot be encoded`);
    return v;
  }
  const [kind, inner] = type;
  if ((kind === 'list' || kind === 'set') && Array.isArray(v)) return v.map((x) => encodable(inner, x));
  if (kind === 'map' && isObjectValue(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, encodable(inner, x)]));
  if (kind === 'object' && isObjectValue(v)) {
    return Object.fromEntries(Object.entries(inner).map(([k, t]) => [k, encodable(t, v[k] ?? null)]));
  }
  throw new Error(`value does not match type ${JSON.stringify(type)}`);
}

/** Encodes a value of `type`: objects always carry every attribute of their type, as cty requires. */
export function encodeValue(type: CtyType, v: Value): Uint8Array {
  return encode(encodable(type, conform(type, v)), { extensionCodec: codec, ignoreUndefined: false });
}
