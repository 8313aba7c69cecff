/**
 * Field-mask and body fuzzing. Unknown paths, `*`, duplicates, depth up to 1,000,
 * 64 KiB strings, unicode and empty segments: no crash and no 5xx, every rejection names the
 * offending path, and accepted updates round-trip (the next read returns what the write returned).
 *
 * - 10,000 cases against the pure mask/body parsers (the U level of the catalogue);
 * - 1,000 cases (10,000 with PADDOCK_SOAK) through the real HTTP pipeline (Fastify inject: routing,
 *   auth guard, handlers, Postgres), against one runner.
 */
import fc from 'fast-check';
import { MANAGED_RUNNER_MUTABLE_PATHS, PaddockError } from '@paddock/contracts';
import { parseUpdateMask } from '../../src/modules/runners/domain/update-mask';
import { parseUpdateRunner } from '../../src/modules/runners/application/runner-input';
import { startTestApp, type TestApp } from '../support/app';
import { createRunner } from '../support/fixtures';

const HTTP_RUNS = process.env.PADDOCK_SOAK ? 10_000 : 1_000;

const SEGMENTS = [
  'spec', 'policy', 'identity', 'zone', 'runner_id', 'runnerId', 'release_channel', 'releaseChannel', 'overrides', 'display_name',
  'displayName', 'etag', 'install_status', 'profile_bindings', 'managed_spec', 'allow_privileged_profile_annotations',
  'maintenance_policy', 'enforce_resource_limits', 'runner_group_id', 'cluster_id', 'constraints', 'deployment_spec', 'uid', '*', '',
];

const segment = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...SEGMENTS) },
  { weight: 1, arbitrary: fc.string({ maxLength: 12 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 8 }) },
);
const mutablePath = fc.constantFrom(...MANAGED_RUNNER_MUTABLE_PATHS, 'spec.releaseChannel', 'spec.enforceResourceLimits', 'identity.runnerGroupId', 'displayName');
const DEEP = Array.from({ length: 1000 }, () => 'spec').join('.');
const path = fc.oneof(
  { weight: 8, arbitrary: fc.array(segment, { minLength: 1, maxLength: 4 }).map((s) => s.join('.')) },
  { weight: 6, arbitrary: mutablePath },
  { weight: 1, arbitrary: fc.integer({ min: 2, max: 1000 }).map((n) => DEEP.slice(0, n * 5 - 1)) },
  { weight: 1, arbitrary: fc.constantFrom('x'.repeat(65_536), `spec.${'ü'.repeat(20_000)}`, 'a'.repeat(1000)) },
);
const mask = fc.oneof(
  { weight: 1, arbitrary: fc.constant(undefined) },
  { weight: 1, arbitrary: fc.constantFrom('*', '', ',', '*,policy', 'policy,policy', 'spec,spec.release_channel') },
  { weight: 4, arbitrary: fc.array(mutablePath, { minLength: 1, maxLength: 3 }).map((a) => a.join(',')) },
  { weight: 8, arbitrary: fc.array(path, { minLength: 1, maxLength: 5 }).map((a) => a.join(',')) },
);

const ETAG_PLACEHOLDER = '<current-etag>';
const spec = fc.record(
  {
    releaseChannel: fc.constantFrom('RELEASE_CHANNEL_RAPID', 'RELEASE_CHANNEL_STABLE', 'RELEASE_CHANNEL_UNSPECIFIED', 'bogus'),
    maintenancePolicy: fc.record(
      {
        windows: fc.array(fc.record({ cron: fc.constantFrom('0 9 * * SAT', '*/5 * * * *', 'not cron', '0 0 0 0 0 0'), durationSeconds: fc.integer({ min: 0, max: 700_000 }) }), { maxLength: 2 }),
        exclusions: fc.array(fc.record({ startTime: fc.constantFrom('2026-12-01T00:00:00Z', 'yesterday'), endTime: fc.constantFrom('2026-12-02T00:00:00Z', '2026-11-01T00:00:00Z') }), { maxLength: 2 }),
      },
      { requiredKeys: [] },
    ),
    overrides: fc.record(
      {
        nodeSelector: fc.dictionary(fc.string({ maxLength: 8 }), fc.string({ maxLength: 8 }), { maxKeys: 3 }),
        env: fc.dictionary(fc.constantFrom('LOG_LEVEL', 'MY_VAR', 'x'), fc.oneof(fc.string({ maxLength: 8 }), fc.integer())),
        scaling: fc.record({ minReplicas: fc.integer({ min: -1, max: 5 }), maxReplicas: fc.integer({ min: 0, max: 5 }) }, { requiredKeys: [] }),
        affinity: fc.constantFrom('{}', '{"nodeAffinity":{}}', 'not json', '[]'),
        tolerations: fc.array(fc.record({ key: fc.string({ maxLength: 5 }), operator: fc.constantFrom('Equal', 'Exists', 'Sometimes') }, { requiredKeys: [] }), { maxLength: 2 }),
      },
      { requiredKeys: [] },
    ),
    enforceResourceLimits: fc.oneof(fc.boolean(), fc.constant('yes')),
  },
  { requiredKeys: [] },
);
const policy = fc.oneof(
  fc.constant({}),
  fc.constant(null),
  fc.integer({ min: 0, max: 3_000_000 }).map((s) => ({ constraints: { lifecycle: { defaultLifetimeSeconds: s } } })),
  fc.constant({ constraints: { resources: { maxCpu: 'lots' } } }),
  fc.jsonValue({ maxDepth: 3 }),
);
const runnerBody = fc.record(
  {
    displayName: fc.oneof(fc.string({ maxLength: 20 }), fc.integer(), fc.constant(null)),
    identity: fc.record(
      { zone: fc.constantFrom('us-east-1', 'US-EAST-1', '', 'eu-west-2'), runnerGroupId: fc.string({ maxLength: 10 }), runnerId: fc.constantFrom('fuzz-runner', 'someone-else') },
      { requiredKeys: [] },
    ),
    spec,
    policy,
    etag: fc.constantFrom(ETAG_PLACEHOLDER, 'stale-etag', ''),
    installStatus: fc.constant('RUNNER_INSTALL_STATUS_READY'),
    unknownField: fc.jsonValue({ maxDepth: 1 }),
  },
  { requiredKeys: [] },
);
/** Well-formed bodies, so enough updates are accepted to check the round trip. */
const validBody = fc.record({
  displayName: fc.string({ maxLength: 20 }),
  identity: fc.record({ zone: fc.constantFrom('us-east-1', 'us-west-2'), runnerGroupId: fc.constantFrom('default', 'gpu', '') }),
  spec: fc.record(
    {
      releaseChannel: fc.constantFrom('RELEASE_CHANNEL_RAPID', 'RELEASE_CHANNEL_STABLE'),
      enforceResourceLimits: fc.boolean(),
      overrides: fc.record({ env: fc.dictionary(fc.constantFrom('LOG_LEVEL', 'MY_VAR'), fc.string({ maxLength: 6 })) }),
      maintenancePolicy: fc.record({ windows: fc.array(fc.record({ cron: fc.constant('0 9 * * SAT'), durationSeconds: fc.integer({ min: 60, max: 86_400 }) }), { maxLength: 1 }) }),
    },
    { requiredKeys: ['releaseChannel'] },
  ),
  policy: fc.integer({ min: 0, max: 86_400 }).map((s) => ({ constraints: { lifecycle: { defaultLifetimeSeconds: s } } })),
  etag: fc.constant(ETAG_PLACEHOLDER),
});
const body = fc.oneof({ weight: 4, arbitrary: runnerBody }, { weight: 4, arbitrary: validBody }, { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) });

interface Violation {
  field: string;
  rule: string;
}

/** The last meaningful token of a field path, which the message must mention. */
function lastToken(field: string): string {
  const tokens = field.split(/[.[\]"]/).filter((s) => s !== '');
  return (tokens[tokens.length - 1] ?? field).slice(0, 100);
}

/** Every mask path the parser refuses must be named by a violation (by itself or its position). */
function expectMaskPathsNamed(raw: string, violations: Violation[]): void {
  const items = raw.split(',');
  if (items.length > 64) {
    expect(violations.some((v) => v.field === 'updateMask')).toBe(true);
    return;
  }
  for (const [i, item] of items.entries()) {
    const p = item.trim();
    try {
      parseUpdateMask(p === '' ? ',' : p);
    } catch {
      expect(violations.some((v) => v.field === p || v.field === `updateMask[${i}]` || (p === '*' && v.field === '*'))).toBe(true);
    }
  }
}

describe('API-3 (U): 10,000 masks and bodies through the parsers', () => {
  it('never crashes; refusals are invalid_argument naming the offending path', () => {
    let refused = 0;
    fc.assert(
      fc.property(mask, body, (m, b) => {
        let plan;
        try {
          plan = parseUpdateMask(m);
        } catch (e) {
          expect(e).toBeInstanceOf(PaddockError);
          const err = e as PaddockError;
          expect(err.code).toBe('invalid_argument');
          expect(err.violations.length).toBeGreaterThan(0);
          expectMaskPathsNamed(m ?? '', err.violations);
          refused++;
          return;
        }
        try {
          parseUpdateRunner(b, plan);
        } catch (e) {
          expect(e).toBeInstanceOf(PaddockError);
          const err = e as PaddockError;
          expect(err.code).toBe('invalid_argument');
          const first = err.violations[0];
          expect(first?.field).toBeTruthy();
          expect(err.message).toContain(lastToken(first?.field ?? ''));
        }
      }),
      { numRuns: 10_000 },
    );
    expect(refused).toBeGreaterThan(1000);
  }, 180_000);
});

describe(`API-3 (HTTP): ${HTTP_RUNS} fuzzed PATCHes through the real pipeline`, () => {
  let t: TestApp;
  beforeAll(async () => {
    // Token lookups are cached here: the fuzz is about masks and bodies, not revocation latency.
    t = await startTestApp({ env: { PADDOCK_TOKEN_CACHE_TTL_MS: '60000' } });
    await createRunner(t, 'fuzz-runner');
  });
  afterAll(async () => {
    await t?.close();
  });

  it('no 5xx; errors are well-formed and name a field; accepted writes round-trip', async () => {
    const start = await t.app.inject({ method: 'GET', url: '/v1/sandbox/managedRunners/fuzz-runner', headers: { authorization: `Bearer ${t.adminToken}` } });
    let etag = start.json<{ etag: string }>().etag;
    const stats = { ok: 0, rejected: 0, statuses: new Map<number, number>() };
    await fc.assert(
      fc.asyncProperty(mask, body, async (m, b) => {
        const payload = JSON.stringify(b).replaceAll(ETAG_PLACEHOLDER, etag);
        const url = `/v1/sandbox/managedRunners/fuzz-runner${m === undefined ? '' : `?updateMask=${encodeURIComponent(m)}`}`;
        const res = await t.app.inject({ method: 'PATCH', url, headers: { authorization: `Bearer ${t.adminToken}`, 'content-type': 'application/json' }, payload });
        stats.statuses.set(res.statusCode, (stats.statuses.get(res.statusCode) ?? 0) + 1);
        expect(res.statusCode, res.body.slice(0, 500)).toBeLessThan(500);
        const json = res.json<Record<string, unknown>>();
        if (res.statusCode === 200) {
          stats.ok++;
          etag = json.etag as string;
          const read = await t.app.inject({ method: 'GET', url: '/v1/sandbox/managedRunners/fuzz-runner', headers: { authorization: `Bearer ${t.adminToken}` } });
          expect(read.json()).toEqual(json);
          return;
        }
        stats.rejected++;
        expect(typeof json.code).toBe('string');
        expect(typeof json.message).toBe('string');
        const violations = ((json.details ?? []) as { fieldViolations?: Violation[] }[]).flatMap((d) => d.fieldViolations ?? []);
        if (json.code === 'invalid_argument' || json.code === 'failed_precondition') {
          expect(violations.length, res.body.slice(0, 300)).toBeGreaterThan(0);
          const first = violations[0] as Violation;
          expect(first.field).toBeTruthy();
          expect(json.message).toContain(lastToken(first.field));
          if (typeof m === 'string' && String(json.message).startsWith('invalid updateMask')) expectMaskPathsNamed(m, violations);
        }
      }),
      { numRuns: HTTP_RUNS },
    );
    expect(stats.ok).toBeGreaterThan(10);
    expect(stats.rejected).toBeGreaterThan(100);
    console.info(`API-3 HTTP: ${HTTP_RUNS} requests, statuses ${JSON.stringify(Object.fromEntries(stats.statuses))}`);
  }, 600_000);
});
