import { decodeRpcReply } from '@paddock/contracts';
import { FixedClock } from '@paddock/testing';
import { fastExecResult } from '../src/runners/runner-client';
import { SandboxRouteCache } from '../src/sandboxes/sandbox-route-cache';
import type { SandboxRow } from '../src/sandboxes/sandbox-view';

function row(over: Partial<SandboxRow> = {}): SandboxRow {
  const t = new Date('2026-01-01T00:00:00Z');
  return {
    id: 'sb-1',
    organization_id: 'org-a',
    request_id: null,
    request_fingerprint: 'x',
    spec: {},
    tags: [],
    state: 'STATE_RUNNING',
    state_reason: null,
    message: null,
    exit_code: null,
    state_sequence: 1,
    runner_id: 'r-1',
    runner_group_id: 'g',
    placement: { decidedAt: t.toISOString(), candidates: [], verdicts: [], attempts: [], winner: 'r-1' },
    effective: null,
    create_attempts: 0,
    runner_acknowledged: true,
    delete_requested_at: null,
    delete_grace_seconds: 0,
    logs_deleted_at: null,
    create_time: t,
    start_time: t,
    end_time: null,
    updated_at: t,
    ...over,
  };
}

describe('SandboxRouteCache (pure)', () => {
  const clock = new FixedClock();
  const cache = (ttlMs = 5_000, max = 100): SandboxRouteCache => new SandboxRouteCache(ttlMs, max, () => clock.now().getTime());

  it('serves a live, acknowledged sandbox to its own organization only, until the TTL passes', () => {
    const c = cache();
    c.remember(row());
    expect(c.get('org-a', 'sb-1')).toEqual({ id: 'sb-1', organizationId: 'org-a', runnerId: 'r-1' });
    // Another organization asking for the same id is a miss (it then gets the database's not_found).
    expect(c.get('org-b', 'sb-1')).toBeUndefined();
    expect(c.get('org-a', 'sb-1')).toBeDefined();
    clock.advance(4_999);
    expect(c.get('org-a', 'sb-1')).toBeDefined();
    clock.advance(1);
    expect(c.get('org-a', 'sb-1')).toBeUndefined();
    expect(c.size).toBe(0);
  });

  it('never caches what may still move: unacknowledged, terminal, or being deleted; nor anything with a TTL of 0', () => {
    const c = cache();
    c.remember(row({ id: 'pending', state: 'STATE_PENDING', runner_acknowledged: false }));
    c.remember(row({ id: 'done', state: 'STATE_COMPLETED' }));
    c.remember(row({ id: 'failed', state: 'STATE_FAILED' }));
    c.remember(row({ id: 'deleting', delete_requested_at: new Date() }));
    for (const id of ['pending', 'done', 'failed', 'deleting']) expect(c.get('org-a', id), id).toBeUndefined();
    const off = cache(0);
    off.remember(row());
    expect(off.get('org-a', 'sb-1')).toBeUndefined();
  });

  it('a retired sandbox is not cached again by a read that started before it left the live set', () => {
    const c = cache();
    c.remember(row());
    const staleRead = row(); // read from the database while the terminal event was being applied
    c.retire('sb-1');
    expect(c.get('org-a', 'sb-1')).toBeUndefined();
    c.remember(staleRead);
    expect(c.get('org-a', 'sb-1')).toBeUndefined();
    // `invalidate` (a runner refused a cached route) keeps the retirement.
    c.invalidate('sb-1');
    c.remember(staleRead);
    expect(c.get('org-a', 'sb-1')).toBeUndefined();
    // The marker only has to outlive reads in flight; after a minute it no longer holds memory.
    clock.advance(60_000);
    c.remember(staleRead);
    expect(c.get('org-a', 'sb-1')).toBeDefined();
  });

  it('news from a runner that does not own the cached sandbox changes nothing; from the owner it retires it', () => {
    const c = cache();
    c.remember(row());
    c.retireIfOwnedBy('sb-1', 'r-other');
    expect(c.get('org-a', 'sb-1')).toBeDefined();
    c.retireIfOwnedBy('sb-1', 'r-1');
    expect(c.get('org-a', 'sb-1')).toBeUndefined();
    // Nothing cached yet: no marker either, so a later read of a live row may be cached.
    c.retireIfOwnedBy('sb-2', 'r-1');
    c.remember(row({ id: 'sb-2' }));
    expect(c.get('org-a', 'sb-2')).toBeDefined();
  });

  it('invalidate drops a live entry so the next lookup reads the database, which may cache it again', () => {
    const c = cache();
    c.remember(row());
    c.invalidate('sb-1');
    expect(c.get('org-a', 'sb-1')).toBeUndefined();
    c.remember(row());
    expect(c.get('org-a', 'sb-1')).toBeDefined();
  });

  it('stays within its bound, dropping the oldest entries first', () => {
    const c = cache(5_000, 3);
    for (const id of ['a', 'b', 'c', 'd']) c.remember(row({ id }));
    expect(c.size).toBe(3);
    expect(c.get('org-a', 'a')).toBeUndefined();
    expect(['b', 'c', 'd'].every((id) => c.get('org-a', id))).toBe(true);
  });
});

describe('fastExecResult agrees with the contract decoder', () => {
  const ok = {
    exitCode: 0,
    stdoutBase64: 'YQ==',
    stderrBase64: '',
    stdoutTruncated: false,
    stderrTruncated: false,
    stdoutBytesProduced: 1,
    stderrBytesProduced: 0,
    timedOut: false,
  };
  const samples: unknown[] = [
    { ok: true, result: ok },
    { ok: true, result: { ...ok, exitCode: -9, timedOut: true } },
    { ok: true, result: { ...ok, extra: 'dropped' } },
    { ok: true, result: { ...ok, exitCode: 1.5 } },
    { ok: true, result: { ...ok, exitCode: Number.NaN } },
    { ok: true, result: { ...ok, stdoutBytesProduced: -1 } },
    { ok: true, result: { ...ok, stderrBytesProduced: Number.POSITIVE_INFINITY } },
    { ok: true, result: { ...ok, stdoutBase64: 1 } },
    { ok: true, result: { ...ok, stderrTruncated: 'no' } },
    { ok: true, result: { exitCode: 0 } },
    { ok: true, result: null },
    { ok: true },
    { ok: 'true', result: ok },
    { ok: false, error: { code: 'not_found', message: 'gone', details: [] } },
    null,
    'text',
    [],
  ];

  it.each(samples.map((s, i) => [i, s] as const))('sample %i: same acceptance and same result', (_i, raw) => {
    const fast = fastExecResult(raw);
    let zod: ReturnType<typeof decodeRpcReply<'exec'>> | null;
    try {
      zod = decodeRpcReply('exec', raw);
    } catch {
      zod = null;
    }
    if (fast) {
      // Whatever the fast path accepts, the decoder accepts too, with the very same object.
      expect(zod).toEqual({ ok: true, result: fast });
    } else {
      // Whatever it declines goes to the decoder, which must decline it as well or be an error reply.
      expect(zod === null || zod.ok === false).toBe(true);
    }
  });
});
