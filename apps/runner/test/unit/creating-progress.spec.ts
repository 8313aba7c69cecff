import { applyStateChange, type SandboxRecord } from '../../src/service/sandbox-record';

/** An image pull reports its progress as CREATING messages: the record takes them without a state change. */
describe('sandbox record: progress of a creation', () => {
  const base = {
    sandboxId: 's1',
    organizationId: 'o1',
    spec: {},
    labels: {},
    effective: {},
    requestFingerprint: '{}',
    state: 'STATE_CREATING',
    createTime: new Date(0),
    sequence: 10,
    allocation: { cpuMillis: 100, memoryBytes: 1 },
    deadline: new Date(1_000_000),
  } as unknown as SandboxRecord;

  it('updates the message of a CREATING sandbox, advances its sequence, and ignores repeats and other states', () => {
    const at = new Date(5);
    const next = applyStateChange(base, { state: 'STATE_CREATING', message: 'pulling image r/x:1 (3 layers, 50.0 MiB)', at });
    expect(next).toMatchObject({ state: 'STATE_CREATING', message: 'pulling image r/x:1 (3 layers, 50.0 MiB)' });
    expect((next as SandboxRecord).sequence).toBeGreaterThan(base.sequence);
    expect(applyStateChange(next as SandboxRecord, { state: 'STATE_CREATING', message: 'pulling image r/x:1 (3 layers, 50.0 MiB)', at })).toBeUndefined();
    expect(applyStateChange(base, { state: 'STATE_CREATING', at })).toBeUndefined();
    const running = applyStateChange(next as SandboxRecord, { state: 'STATE_RUNNING', at }) as SandboxRecord;
    expect(running.state).toBe('STATE_RUNNING');
    expect(applyStateChange(running, { state: 'STATE_CREATING', message: 'late', at })).toBeUndefined();
  });
});
