/**
 * The few DER (ASN.1) encodings an X.509 certificate needs. Lengths use the definite form;
 * integers are unsigned big-endian with a leading zero when the top bit is set.
 */
const tagged = (tag: number, body: Buffer): Buffer => Buffer.concat([Buffer.from([tag]), length(body.length), body]);

function length(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  const bytes: number[] = [];
  for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

export const sequence = (...items: Buffer[]): Buffer => tagged(0x30, Buffer.concat(items));
export const set = (...items: Buffer[]): Buffer => tagged(0x31, Buffer.concat(items));
export const bool = (v: boolean): Buffer => tagged(0x01, Buffer.from([v ? 0xff : 0x00]));
export const octetString = (body: Buffer): Buffer => tagged(0x04, body);
export const utf8String = (s: string): Buffer => tagged(0x0c, Buffer.from(s, 'utf8'));
/** A BIT STRING of whole bytes (no unused bits). */
export const bitString = (body: Buffer): Buffer => tagged(0x03, Buffer.concat([Buffer.from([0]), body]));
/** Context-specific constructed tag `[n]` (explicit tagging). */
export const explicit = (n: number, body: Buffer): Buffer => tagged(0xa0 | n, body);
/** Context-specific primitive tag `[n]` (implicit tagging, e.g. a SAN dNSName is `[2]`). */
export const implicit = (n: number, body: Buffer): Buffer => tagged(0x80 | n, body);

export function unsignedInteger(bytes: Buffer): Buffer {
  let i = 0;
  while (i < bytes.length - 1 && bytes[i] === 0) i++;
  const trimmed = bytes.subarray(i);
  return tagged(0x02, (trimmed[0] ?? 0) & 0x80 ? Buffer.concat([Buffer.from([0]), trimmed]) : trimmed);
}

export function oid(dotted: string): Buffer {
  const [a = 0, b = 0, ...rest] = dotted.split('.').map(Number);
  const out = [40 * a + b];
  for (const n of rest) {
    const groups: number[] = [];
    for (let v = n; ; v = Math.floor(v / 128)) {
      groups.unshift(v % 128);
      if (v < 128) break;
    }
    out.push(...groups.map((g, i) => (i < groups.length - 1 ? g | 0x80 : g)));
  }
  return tagged(0x06, Buffer.from(out));
}

/** UTCTime for years 1950-2049, GeneralizedTime otherwise, as RFC 5280 requires. */
export function time(d: Date): Buffer {
  const iso = d.toISOString().replace(/[-:T]/g, '').replace(/\.\d+Z$/, 'Z');
  const year = d.getUTCFullYear();
  return year >= 1950 && year < 2050 ? tagged(0x17, Buffer.from(iso.slice(2), 'ascii')) : tagged(0x18, Buffer.from(iso, 'ascii'));
}
