import type { RunnerRevision } from '@paddock/contracts';
import { decodeServerFrame, initFrame, resizeFrame } from '../src/lib/exec-frames';
import { base64ToBytes, ndjsonLines } from '../src/lib/ndjson';
import { checkPolicyText, formatPolicy } from '../src/lib/policy-text';
import { diffRevisions } from '../src/lib/revision-diff';
import { EMPTY_FORM, specFromForm } from '../src/lib/spec-form';

const rev = (revision: number, changes: RunnerRevision['changes']): RunnerRevision => ({ revision, eventType: 'RunnerUpdated', changes, actor: 'a', time: '2026-12-01T00:00:00Z', policyEtag: `e${revision}` });

describe('diffRevisions', () => {
  const revisions = [
    rev(1, [{ field: 'displayName', after: 'one' }]),
    rev(2, [{ field: 'policy.constraints.resources.maxCpu', before: '2', after: '1' }]),
    rev(3, [{ field: 'displayName', before: 'one', after: 'two' }, { field: 'spec.releaseChannel', before: 'RELEASE_CHANNEL_STABLE', after: 'RELEASE_CHANNEL_RAPID' }]),
    rev(4, [{ field: 'spec.releaseChannel', before: 'RELEASE_CHANNEL_RAPID', after: 'RELEASE_CHANNEL_STABLE' }]),
  ];

  it('composes every change in (from, to] from the first before to the last after, and drops fields changed back', () => {
    expect(diffRevisions(revisions, 1, 4)).toEqual([
      { field: 'displayName', before: 'one', after: 'two' },
      { field: 'policy.constraints.resources.maxCpu', before: '2', after: '1' },
    ]);
    expect(diffRevisions(revisions, 0, 1)).toEqual([{ field: 'displayName', before: undefined, after: 'one' }]);
    expect(diffRevisions(revisions, 3, 3)).toEqual([]);
  });

  it('reads backwards when from is after to', () => {
    expect(diffRevisions(revisions, 3, 1)).toEqual([
      { field: 'displayName', before: 'two', after: 'one' },
      { field: 'policy.constraints.resources.maxCpu', before: '1', after: '2' },
      { field: 'spec.releaseChannel', before: 'RELEASE_CHANNEL_RAPID', after: 'RELEASE_CHANNEL_STABLE' },
    ]);
  });
});

describe('policy text (the @paddock/policy validator, as the browser runs it)', () => {
  it('accepts YAML and JSON spellings of the same policy, snake_case included', () => {
    const yaml = checkPolicyText('constraints:\n  resources:\n    max_cpu: "1"\n');
    const json = checkPolicyText('{"constraints": {"resources": {"maxCpu": "1"}}}');
    expect(yaml).toEqual({ ok: true, policy: { constraints: { resources: { maxCpu: '1' } } } });
    expect(json).toEqual(yaml);
    expect(checkPolicyText('{}')).toEqual({ ok: true, policy: {} });
  });

  it('names the field and the rule of each problem, and refuses what is not a mapping', () => {
    const bad = checkPolicyText('constraints:\n  resources:\n    maxCpu: lots\n');
    expect(bad.ok).toBe(false);
    if (!bad.ok) expect(bad.violations.map((v) => v.field)).toContain('constraints.resources.maxCpu');
    const anchors = checkPolicyText('a: &x 1\nb: *x\n');
    expect(anchors.ok).toBe(false);
    const list = checkPolicyText('- 1\n');
    expect(list).toMatchObject({ ok: false, violations: [{ field: 'document', rule: 'type' }] });
  });

  it('formats round-trip in both formats', () => {
    const policy = { displayName: 'x', constraints: { resources: { maxCpu: '1' } } };
    for (const f of ['yaml', 'json'] as const) expect(checkPolicyText(formatPolicy(policy, f))).toEqual({ ok: true, policy });
    expect(formatPolicy(null, 'json')).toBe('{}\n');
  });
});

describe('log stream and exec frames', () => {
  it('splits NDJSON across arbitrary chunk boundaries, multi-byte characters included', async () => {
    const text = '{"a":"é"}\n{"b":2}\n\n{"c":3}';
    const bytes = new TextEncoder().encode(text);
    const stream = new ReadableStream<Uint8Array>({
      start(c) {
        for (let i = 0; i < bytes.length; i += 3) c.enqueue(bytes.subarray(i, i + 3));
        c.close();
      },
    });
    const lines: string[] = [];
    for await (const l of ndjsonLines(stream)) lines.push(l);
    expect(lines).toEqual(['{"a":"é"}', '{"b":2}', '{"c":3}']);
    expect([...base64ToBytes(Buffer.from([0, 255, 10]).toString('base64'))]).toEqual([0, 255, 10]);
  });

  it('decodes channel-prefixed output and the control messages, and encodes init and resize', () => {
    const out = decodeServerFrame(new Uint8Array([2, 104, 105]).buffer);
    expect(out).toMatchObject({ kind: 'output', channel: 2 });
    if (out.kind === 'output') expect(new TextDecoder().decode(out.bytes)).toBe('hi');
    expect(decodeServerFrame('{"type":"exit","exitCode":3,"timedOut":false}')).toEqual({ kind: 'message', message: { type: 'exit', exitCode: 3, timedOut: false } });
    expect(decodeServerFrame('nope')).toEqual({ kind: 'invalid', text: 'nope' });
    expect(JSON.parse(initFrame(['/bin/sh'], 80, 24))).toEqual({ type: 'init', argv: ['/bin/sh'], tty: true, cols: 80, rows: 24 });
    expect(JSON.parse(resizeFrame(40, 10))).toEqual({ type: 'resize', cols: 40, rows: 10 });
  });
});

describe('the create form', () => {
  it('sends only what was filled in, so the policy defaults apply to the rest', () => {
    expect(specFromForm(EMPTY_FORM)).toEqual({ containers: [{ name: 'main' }] });
    expect(specFromForm({ ...EMPTY_FORM, command: 'echo hi', cpu: '500m', tags: 'a, b', runnerIds: ['local'], maxLifetimeSeconds: '60' })).toEqual({
      containers: [{ name: 'main', command: ['/bin/sh', '-c', 'echo hi'], resources: { cpu: '500m' } }],
      tags: ['a', 'b'],
      mode: 'SANDBOX_MODE_CKS',
      runnerIds: ['local'],
      maxLifetimeSeconds: 60,
    });
  });
});
