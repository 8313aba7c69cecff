import {
  CreateSandboxRequestSchema,
  decodeFrame,
  decodeRpcReply,
  encodeFrame,
  LogsRequestSchema,
  PaddockError,
  ReceiveWindow,
  RUNNER_RPC_SCHEMAS,
  SANDBOX_STATE_RANK,
  SANDBOX_STATES,
  TERMINAL_SANDBOX_STATE_RANK,
  TERMINAL_SANDBOX_STATES,
  SandboxStateEventSchema,
  SendWindow,
  WriteFileRequestSchema,
} from '../src';

describe('stream frames', () => {
  it('round-trips a header and a binary payload byte-exact', () => {
    const payload = new Uint8Array(256).map((_, i) => i);
    const body = encodeFrame({ kind: 'stdout', seq: 7, offset: 1024 }, payload);
    const frame = decodeFrame(body);
    expect(frame.header).toMatchObject({ kind: 'stdout', seq: 7, offset: 1024 });
    expect(Array.from(frame.payload)).toEqual(Array.from(payload));
  });

  it('carries a control frame with no payload and defaults seq to 0', () => {
    const frame = decodeFrame(encodeFrame({ kind: 'exit', exitCode: 3, timedOut: false }));
    expect(frame.header).toEqual({ kind: 'exit', seq: 0, exitCode: 3, timedOut: false });
    expect(frame.payload.length).toBe(0);
  });

  it('refuses a truncated body', () => {
    const body = encodeFrame({ kind: 'data', seq: 1 }, new Uint8Array([1, 2, 3]));
    expect(() => decodeFrame(body.subarray(0, 5))).toThrow(/truncated/);
    expect(() => decodeFrame(new Uint8Array([0]))).toThrow(/shorter/);
  });

  it('refuses an unknown frame kind', () => {
    const head = new TextEncoder().encode(JSON.stringify({ kind: 'bogus' }));
    const body = new Uint8Array([0, head.length, ...head]);
    expect(() => decodeFrame(body)).toThrow();
  });
});

describe('credit window', () => {
  it('never lets the sender exceed the cumulative grant', () => {
    const send = new SendWindow(2);
    expect(send.next()).toBe(1);
    expect(send.next()).toBe(2);
    expect(send.canSend()).toBe(false);
    expect(() => send.next()).toThrow(/exhausted/);
    expect(send.grant(2)).toBe(false); // a duplicate grant opens nothing
    expect(send.grant(5)).toBe(true);
    expect(send.available()).toBe(3);
    expect(send.grant(4)).toBe(false); // reordered older grant is ignored
    expect(send.available()).toBe(3);
  });

  it('re-grants once half the window is consumed, keeping in-flight frames bounded', () => {
    const recv = new ReceiveWindow(8);
    const send = new SendWindow(recv.initialGrant);
    let maxInFlight = 0;
    let delivered = 0;
    const inFlight: number[] = [];
    while (delivered < 100) {
      while (send.canSend()) inFlight.push(send.next());
      maxInFlight = Math.max(maxInFlight, inFlight.length);
      const seq = inFlight.shift();
      if (seq === undefined) throw new Error('sender stalled with nothing in flight');
      const grant = recv.onFrame(seq);
      delivered++;
      if (grant !== undefined) send.grant(grant);
    }
    expect(maxInFlight).toBeLessThanOrEqual(8);
    expect(recv.consumedCount).toBe(100);
  });

  it('detects a gap and a duplicate', () => {
    const recv = new ReceiveWindow(2);
    expect(() => recv.onFrame(2)).toThrow(/out of order/);
    recv.onFrame(1);
    expect(() => recv.onFrame(1)).toThrow(/out of order/);
    expect(recv.consumedCount).toBe(1);
  });
});

describe('request schemas', () => {
  it('accepts a create with an empty spec (every default) and keeps the caller-chosen id', () => {
    const req = CreateSandboxRequestSchema.parse({ sandboxId: 'sb-1', organizationId: 'org', spec: {} });
    expect(req.sandboxId).toBe('sb-1');
    expect(req.spec.containers).toEqual([{ name: 'main' }]);
  });

  it('lets every op carry the request id it serves, and refuses one that is not a header-safe token', () => {
    const carrying = Object.entries(RUNNER_RPC_SCHEMAS)
      .filter(([, s]) => 'trace' in s.request.shape)
      .map(([op]) => op);
    expect(carrying).toEqual(Object.keys(RUNNER_RPC_SCHEMAS));
    const get = RUNNER_RPC_SCHEMAS.get.request;
    expect(get.parse({ sandboxId: 's', organizationId: 'o', trace: { requestId: 'req-1' } }).trace).toEqual({ requestId: 'req-1' });
    expect(get.safeParse({ sandboxId: 's', organizationId: 'o', trace: { requestId: 'a b' } }).error?.issues[0]?.path).toEqual(['trace', 'requestId']);
  });

  it('wants exactly one of inline content or a stream on writeFile', () => {
    const base = { sandboxId: 's', organizationId: 'o', path: '/a' };
    expect(WriteFileRequestSchema.safeParse(base).success).toBe(false);
    expect(WriteFileRequestSchema.safeParse({ ...base, contentBase64: '', streamId: 'x' }).success).toBe(false);
    expect(WriteFileRequestSchema.safeParse({ ...base, contentBase64: '' }).success).toBe(true);
  });

  it('refuses a log resume combined with tailLines', () => {
    const r = LogsRequestSchema.safeParse({ sandboxId: 's', organizationId: 'o', streamId: 'l1', fromOffset: 4, tailLines: 3 });
    expect(r.success).toBe(false);
    expect(r.error?.issues[0]?.path).toEqual(['fromOffset']);
  });

  it('decodes an error reply into a PaddockError with its reason', () => {
    const body = new PaddockError('not_found', 'sandbox sb-9 not found', { reason: 'CWSANDBOX_SANDBOX_NOT_FOUND' }).toBody();
    const reply = decodeRpcReply('get', JSON.parse(JSON.stringify({ ok: false, error: body })));
    expect(reply.ok).toBe(false);
    if (!reply.ok) expect(PaddockError.fromBody(reply.error).reason).toBe('CWSANDBOX_SANDBOX_NOT_FOUND');
  });

  it('validates a state event', () => {
    const evt = { sandboxId: 's', organizationId: 'o', runnerId: 'r', state: 'STATE_RUNNING', at: new Date().toISOString(), sequence: 1 };
    expect(SandboxStateEventSchema.parse(evt).state).toBe('STATE_RUNNING');
  });
});

describe('sandbox state order', () => {
  it('ranks every state, the terminal ones together at the top and UNSPECIFIED below everything', () => {
    expect(Object.keys(SANDBOX_STATE_RANK).sort()).toEqual([...SANDBOX_STATES].sort());
    const top = Math.max(...Object.values(SANDBOX_STATE_RANK));
    expect(top).toBe(TERMINAL_SANDBOX_STATE_RANK);
    expect(SANDBOX_STATES.filter((s) => SANDBOX_STATE_RANK[s] === top)).toEqual([...TERMINAL_SANDBOX_STATES]);
    expect(SANDBOX_STATES.filter((s) => s !== 'STATE_UNSPECIFIED').every((s) => SANDBOX_STATE_RANK[s] > SANDBOX_STATE_RANK.STATE_UNSPECIFIED)).toBe(true);
  });
});
