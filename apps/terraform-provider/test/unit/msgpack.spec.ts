import { encode } from '@msgpack/msgpack';
import { decodeValue, encodeValue } from '../../src/cty/msgpack';
import { UNKNOWN, conform, isWhollyKnown, valuesEqual, type CtyType, type Value } from '../../src/cty/value';

const TYPE: CtyType = [
  'object',
  {
    name: 'string',
    count: 'number',
    on: 'bool',
    tags: ['set', 'string'],
    labels: ['map', 'string'],
    items: ['list', ['object', { a: 'string', b: 'number' }]],
  },
];

describe('cty msgpack (DynamicValue)', () => {
  it('round-trips every kind of value, unknowns included', () => {
    const v: Value = { name: 'x', count: 1.5, on: true, tags: ['b', 'a'], labels: { MY_KEY: 'v', 'example.com/some_key': 'kept' }, items: [{ a: UNKNOWN, b: 2 }] };
    const back = decodeValue(TYPE, encodeValue(TYPE, v));
    expect(back).toEqual(conform(TYPE, v));
    expect(isWhollyKnown(back)).toBe(false);
    expect(Object.keys((back as { labels: object }).labels)).toEqual(['MY_KEY', 'example.com/some_key']);
  });

  it('writes an unknown as extension 0 with one zero byte, as Terraform does', () => {
    expect([...encodeValue('string', UNKNOWN)]).toEqual([0xd4, 0x00, 0x00]);
  });

  it('reads a refined unknown (extension 12) as unknown', () => {
    expect(decodeValue('string', new Uint8Array([0xd5, 0x0c, 0x81, 0x01]))).toBe(UNKNOWN);
  });

  it('always writes every attribute of an object, absent ones as nil (cty refuses partial objects)', () => {
    const bytes = encodeValue(['object', { a: 'string', b: 'string' }], { a: 'x' });
    expect([...bytes]).toEqual([...encode({ a: 'x', b: null })]);
  });

  it('completes objects Terraform sends and drops keys the type does not have', () => {
    expect(decodeValue(['object', { a: 'string', b: ['list', 'string'] }], encode({ a: 'x', zzz: 1 }))).toEqual({ a: 'x', b: null });
  });

  it('empty bytes are null', () => {
    expect(decodeValue(TYPE, new Uint8Array())).toBeNull();
  });

  it('compares sets without order and never equates an unknown', () => {
    expect(valuesEqual(['set', 'string'], ['a', 'b'], ['b', 'a'])).toBe(true);
    expect(valuesEqual(['list', 'string'], ['a', 'b'], ['b', 'a'])).toBe(false);
    expect(valuesEqual('string', UNKNOWN, UNKNOWN)).toBe(false);
  });

  it('refuses a value that does not match its type instead of sending it', () => {
    expect(() => encodeValue(['list', 'string'], 'not a list')).toThrow(/does not match type/);
    expect(() => encodeValue('number', Number.NaN)).toThrow(/cannot be encoded/);
  });
});
