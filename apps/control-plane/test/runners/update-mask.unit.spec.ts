import { MANAGED_RUNNER_MUTABLE_PATHS, PaddockError } from '@paddock/contracts';
import { parseUpdateMask } from '../../src/modules/runners/domain/update-mask';
import { PageTokenCodec, filtersHash } from '../../src/modules/runners/projections/page-token';

function refusal(mask: string): PaddockError {
  try {
    parseUpdateMask(mask);
  } catch (e) {
    if (e instanceof PaddockError) return e;
    throw e;
  }
  throw new Error(`mask ${mask} was accepted`);
}

describe('parseUpdateMask', () => {
  it('no mask, an empty mask and * replace every mutable path', () => {
    for (const m of [undefined, '', '*']) expect(parseUpdateMask(m)).toEqual({ mode: 'full', paths: [...MANAGED_RUNNER_MUTABLE_PATHS] });
  });
  it('accepts snake_case and camelCase spellings of the same path, once', () => {
    expect(parseUpdateMask('spec.releaseChannel,spec.release_channel,displayName')).toEqual({ mode: 'paths', paths: ['spec.release_channel', 'display_name'] });
  });
  it.each([
    ['identity.cluster_id', 'immutable', 'PADDOCK_IMMUTABLE_FIELD'],
    ['install_status', 'output_only', 'PADDOCK_OUTPUT_ONLY_FIELD'],
    ['profile_bindings', 'legacy_v1beta2_only', 'PADDOCK_LEGACY_FIELD'],
    ['spec.allowPrivilegedProfileAnnotations', 'legacy_v1beta2_only', 'PADDOCK_LEGACY_FIELD'],
    ['policy.constraints.resources', 'whole_document_only', 'PADDOCK_VALIDATION_FAILED'],
    ['spec.overrides.env', 'not_updatable_subpath', 'PADDOCK_VALIDATION_FAILED'],
    ['nonsense', 'unknown_path', 'PADDOCK_VALIDATION_FAILED'],
    ['spec..overrides', 'empty_segment', 'PADDOCK_VALIDATION_FAILED'],
    ['policy,*', 'wildcard_alone', 'PADDOCK_VALIDATION_FAILED'],
  ])('refuses %s by name (%s)', (mask, rule, reason) => {
    const e = refusal(mask);
    expect(e.code).toBe('invalid_argument');
    expect(e.reason).toBe(reason);
    expect(e.violations.map((v) => v.rule)).toContain(rule);
  });
  it('points v1 writers of legacy paths to where they live', () => {
    expect(refusal('profile_bindings').message).toBe('invalid updateMask: profile_bindings: profile_bindings is accepted only on the legacy v1beta2 surface; configure policy instead');
  });
  it('refuses hostile paths cheaply, naming them', () => {
    const huge = 'x'.repeat(65_536);
    const e = refusal(huge);
    expect(e.violations[0]?.field).toBe(huge);
    expect(e.message.length).toBeLessThan(400);
    const deep = Array.from({ length: 100 }, () => 'a').join('.');
    expect(refusal(deep).violations[0]).toMatchObject({ field: deep, rule: 'max_depth' });
    const deeper = Array.from({ length: 1000 }, () => 'spec').join('.');
    expect(refusal(deeper).violations[0]).toMatchObject({ field: deeper, rule: 'max_length' });
  });
});

describe('PageTokenCodec', () => {
  const codec = new PageTokenCodec('secret-0123456789abcdef');
  const now = new Date('2026-11-29T10:00:00Z');
  const f = filtersHash({ zone: 'us-east-1' });
  const token = codec.encode('org-1', f, { createTime: '2026-11-29 10:00:00+00', uid: '00000000-0000-4000-8000-000000000001' }, now);
  it('round-trips for the same organization and filters', () => {
    expect(codec.decode(token, 'org-1', f, now)).toEqual({ createTime: '2026-11-29 10:00:00+00', uid: '00000000-0000-4000-8000-000000000001' });
  });
  it('is refused under another key, organization, filter set, or when stale', () => {
    expect(() => new PageTokenCodec('another-secret-0123456').decode(token, 'org-1', f, now)).toThrow(/signature mismatch/);
    expect(() => codec.decode(token, 'org-2', f, now)).toThrow(/another organization/);
    expect(() => codec.decode(token, 'org-1', filtersHash({ zone: 'eu' }), now)).toThrow(/other filters/);
    expect(() => codec.decode(token, 'org-1', f, new Date(now.getTime() + 25 * 3600_000))).toThrow(/expired/);
  });
  it('refuses every bit flip of the token', () => {
    const bytes = Buffer.from(token);
    for (let i = 0; i < bytes.length; i++) {
      for (const bit of [0x01, 0x04, 0x20]) {
        const flipped = Buffer.from(bytes);
        flipped[i] = (flipped[i] ?? 0) ^ bit;
        const s = flipped.toString('latin1');
        if (s === token) continue;
        expect(() => codec.decode(s, 'org-1', f, now), `byte ${i} bit ${bit}`).toThrow(PaddockError);
      }
    }
  });
});
