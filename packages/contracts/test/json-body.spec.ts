import { PaddockError } from '../src/errors';
import { parseJsonBody } from '../src/json-body';

describe('parseJsonBody', () => {
  it('parses ordinary JSON, including keys that merely look special', () => {
    expect(parseJsonBody('{"a":[1,{"b":null}],"proto":1,"constructor":"x"}')).toEqual({ a: [1, { b: null }], proto: 1, constructor: 'x' });
  });

  it.each([
    ['{"__proto__":{"polluted":true}}', '__proto__'],
    ['{"a":{"b":[{"__proto__":null}]}}', '__proto__'],
    ['{"constructor":{"prototype":{"polluted":true}}}', 'constructor.prototype'],
    // Spelled with escapes: the key is the same once decoded.
    ['{"\\u005f_proto__":{"polluted":true}}', '__proto__'],
    ['{"a":{"\\u0063onstructor":{"prototype":{"polluted":true}}}}', 'constructor.prototype'],
  ])('refuses %s naming %s, and pollutes nothing', (raw, field) => {
    let err: unknown;
    try {
      parseJsonBody(raw);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(PaddockError);
    expect((err as PaddockError).code).toBe('invalid_argument');
    expect((err as PaddockError).violations.map((v) => v.field)).toEqual([field]);
    expect((err as PaddockError).message).toContain(field);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('names the body on a syntax error', () => {
    expect(() => parseJsonBody('{"a":')).toThrow(/^request body is not valid JSON/);
    expect(parseJsonBody('')).toBeUndefined();
    expect(parseJsonBody(Buffer.from(' \n'))).toBeUndefined();
    expect(parseJsonBody(Buffer.from('{"x":1}'))).toEqual({ x: 1 });
    expect(parseJsonBody('{"s":"a\\u0041\\\\u"}')).toEqual({ s: 'aA\\u' });
  });
});
