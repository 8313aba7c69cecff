import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ClientDuplexStream, ClientReadableStream } from '@grpc/grpc-js';
import { Code, ConnectError } from '@connectrpc/connect';
import { ErrorInfoSchema } from '@paddock/proto';
import { waitFor } from '@paddock/testing';
import { IMAGE, useCluster, type Cluster } from './support/cluster';
import { connectClient, decodeGrpcError, grpcClient, metadataWith, type DecodedStatus, type GrpcSandboxClient, type Wire } from './support/grpc-clients';
import { http, startGateway } from './support/infra';

/** gRPC status codes (numeric, as grpc-js reports them). */
const GRPC = { INVALID_ARGUMENT: 3, NOT_FOUND: 5, FAILED_PRECONDITION: 9, UNAUTHENTICATED: 16, UNIMPLEMENTED: 12 } as const;
const REST_CODE_OF: Record<number, string> = { 3: 'invalid_argument', 5: 'not_found', 9: 'failed_precondition', 12: 'unimplemented', 16: 'unauthenticated' };

const SLEEPER = { image: IMAGE, command: '/bin/sh', args: ['-c', 'sleep 600'] };

interface RestError {
  code: string;
  message: string;
  details: { '@type': string; reason?: string; fieldViolations?: { field: string; description: string }[] }[];
}

async function grpcError(p: Promise<unknown>): Promise<DecodedStatus> {
  try {
    await p;
  } catch (e) {
    return decodeGrpcError(e);
  }
  throw new Error('the call succeeded');
}

/** The parts of an error both transports carry: code, message, ErrorInfo reason, field violations. */
function restErrorFacts(body: unknown): { code: string; message: string; reason?: string; violations?: { field: string; description: string }[] } {
  const b = body as RestError;
  const info = b.details.find((d) => d['@type'].endsWith('google.rpc.ErrorInfo'));
  const bad = b.details.find((d) => d['@type'].endsWith('google.rpc.BadRequest'));
  return {
    code: b.code,
    message: b.message,
    ...(info?.reason ? { reason: info.reason } : {}),
    ...(bad?.fieldViolations ? { violations: bad.fieldViolations.map((v) => ({ field: v.field, description: v.description })) } : {}),
  };
}

function grpcErrorFacts(s: DecodedStatus): ReturnType<typeof restErrorFacts> {
  return {
    code: REST_CODE_OF[s.code] ?? `grpc-${s.code}`,
    message: s.message,
    ...(s.reason ? { reason: s.reason } : {}),
    ...(s.violations ? { violations: s.violations } : {}),
  };
}

const tsMillis = (t: unknown): number => {
  const { seconds, nanos } = t as { seconds: string; nanos: number };
  return Number(seconds) * 1000 + Math.round(nanos / 1e6);
};

function collectStream<T>(call: ClientReadableStream<T> | ClientDuplexStream<unknown, T>, until?: (all: T[]) => boolean): Promise<{ messages: T[]; error?: DecodedStatus }> {
  return new Promise((resolve) => {
    const messages: T[] = [];
    let done = false;
    const finish = (error?: DecodedStatus): void => {
      if (done) return;
      done = true;
      resolve({ messages, ...(error ? { error } : {}) });
    };
    call.on('data', (m: T) => {
      messages.push(m);
      if (until?.(messages)) {
        finish();
        call.cancel();
      }
    });
    call.on('error', (e: unknown) => finish((e as { code?: number }).code === 1 ? undefined : decodeGrpcError(e)));
    call.on('end', () => finish());
  });
}

const text = (msgs: Wire[], pick: (m: Wire) => unknown): string => Buffer.concat(msgs.map((m) => Buffer.from((pick(m) as Uint8Array | undefined) ?? []))).toString();

describe('coreweave.sandbox.v1 over gRPC and Connect', () => {
  const cluster = useCluster({ runnerIds: ['r-large'], runnerEnv: { PADDOCK_IMAGE_ALIASES: 'python:3.11=paddock/base' } });
  let g: GrpcSandboxClient;
  let c: Cluster;
  const rest = (method: string, path: string, body?: unknown, token?: string) => http(c.gw.url, method, path, token ?? c.token, body);

  beforeAll(() => {
    c = cluster();
    g = grpcClient(c.gw.grpc.url);
  });
  afterAll(() => g?.close());

  async function createRunning(container: Record<string, unknown> = SLEEPER, tags: string[] = []): Promise<string> {
    const sb = await g.unary('CreateSandbox', { sandbox: { spec: { containers: [container], tags } } }, c.token);
    const id = sb.sandboxId as string;
    const waited = await rest('GET', `/v1/sandboxes/${id}:wait?timeoutSeconds=60`);
    expect((waited.json as { status: { state: string } }).status.state).toBe('STATE_RUNNING');
    return id;
  }

  it('authenticates every method as REST does: the same single UNAUTHENTICATED error for a missing, malformed or revoked token', async () => {
    const { token: revoked, id } = await c.infra.cp.issueToken('SANDBOX_USER');
    await c.infra.cp.revokeToken(id);
    const restBodies = [await rest('GET', '/v1/sandboxes', undefined, ''), await rest('GET', '/v1/sandboxes', undefined, 'not-a-token'), await rest('GET', '/v1/sandboxes', undefined, revoked)];
    for (const r of restBodies) expect(r.status).toBe(401);
    const restFacts = restErrorFacts(restBodies[0]?.json);
    expect(restBodies.map((r) => r.json)).toEqual([restBodies[0]?.json, restBodies[0]?.json, restBodies[0]?.json]);
    const unary = [
      ['CreateSandbox', { sandbox: { spec: { containers: [SLEEPER] } } }],
      ['CreateSandboxFromTemplate', { templateId: 't' }],
      ['CreateSandboxFromFile', {}],
      ['GetSandbox', { sandboxId: 'x' }],
      ['ListSandboxes', {}],
      ['DeleteSandbox', { sandboxId: 'x' }],
      ['PurgeSandboxes', { purgeAll: true }],
      ['ConnectSandbox', { sandboxId: 'x' }],
      ['Exec', { sandboxId: 'x', command: ['true'] }],
      ['WriteFile', { sandboxId: 'x', path: '/tmp/a' }],
      ['ReadFile', { sandboxId: 'x', path: '/tmp/a' }],
      ['CreateFileSystemSnapshot', { sandboxId: 'x' }],
      ['GetFileSystemSnapshot', { fileSystemSnapshotId: 'x' }],
      ['ListFileSystemSnapshots', {}],
      ['DeleteFileSystemSnapshot', { fileSystemSnapshotId: 'x' }],
    ] as const;
    for (const token of [undefined, 'not-a-token', revoked]) {
      for (const [method, req] of unary) {
        const s = await grpcError(g.unary(method, req, token));
        expect({ method, ...grpcErrorFacts(s) }).toEqual({ method, ...restFacts });
        expect(s.reason).toBeUndefined();
      }
      const logs = await collectStream(g.raw.streamLogs({ sandboxId: 'x' }, metadataWith(token)));
      expect(grpcErrorFacts(logs.error as DecodedStatus)).toEqual(restFacts);
      const exec = g.raw.streamExec(metadataWith(token));
      const execResult = collectStream(exec);
      exec.write({ init: { sandboxId: 'x', command: ['true'] } });
      expect(grpcErrorFacts((await execResult).error as DecodedStatus)).toEqual(restFacts);
    }
  });

  it('answers the same operations through REST and gRPC field by field', async () => {
    const tag = `parity-${Date.now()}`;
    const viaGrpc = await createRunning(SLEEPER, [tag]);
    const viaRest = (await rest('POST', '/v1/sandboxes', { sandbox: { spec: { containers: [SLEEPER], tags: [tag] } } })).json as { sandboxId: string };
    await rest('GET', `/v1/sandboxes/${viaRest.sandboxId}:wait?timeoutSeconds=60`);

    for (const id of [viaGrpc, viaRest.sandboxId]) {
      const r = (await rest('GET', `/v1/sandboxes/${id}`)).json as { sandboxId: string; spec: { containers: Record<string, unknown>[]; tags: string[] }; status: Record<string, unknown> };
      const s = await g.unary('GetSandbox', { sandboxId: id }, c.token);
      const st = s.status as Wire;
      const spec = s.spec as { containers: Wire[]; tags: string[] };
      expect({
        sandboxId: s.sandboxId,
        state: st.state,
        runnerId: st.runnerId,
        runnerGroupId: st.runnerGroupId,
        createTime: tsMillis(st.createTime),
        startTime: tsMillis(st.startTime),
        image: spec.containers[0]?.image,
        command: spec.containers[0]?.command,
        args: spec.containers[0]?.args,
        tags: spec.tags,
        effectiveRuntimeClass: st.effectiveRuntimeClass,
      }).toEqual({
        sandboxId: r.sandboxId,
        state: r.status.state,
        runnerId: r.status.runnerId,
        runnerGroupId: r.status.runnerGroupId,
        createTime: Date.parse(r.status.createTime as string),
        startTime: Date.parse(r.status.startTime as string),
        image: r.spec.containers[0]?.image,
        command: r.spec.containers[0]?.command,
        args: r.spec.containers[0]?.args,
        tags: r.spec.tags,
        effectiveRuntimeClass: r.status.effectiveRuntimeClass ?? '',
      });
    }

    const command = ['/bin/sh', '-c', 'printf out; printf err >&2; exit 3'];
    const re = (await rest('POST', `/v1/sandboxes/${viaGrpc}:exec`, { command })).json as Record<string, unknown>;
    const ge = await g.unary('Exec', { sandboxId: viaGrpc, command }, c.token);
    expect({
      exitCode: ge.exitCode,
      stdout: Buffer.from(ge.stdout as Uint8Array).toString(),
      stderr: Buffer.from(ge.stderr as Uint8Array).toString(),
      stdoutTruncated: ge.stdoutTruncated,
      stderrTruncated: ge.stderrTruncated,
      stdoutBytesProduced: Number(ge.stdoutBytesProduced),
      stderrBytesProduced: Number(ge.stderrBytesProduced),
    }).toEqual({
      exitCode: re.exitCode,
      stdout: Buffer.from(re.stdout as string, 'base64').toString(),
      stderr: Buffer.from(re.stderr as string, 'base64').toString(),
      stdoutTruncated: re.stdoutTruncated,
      stderrTruncated: re.stderrTruncated,
      stdoutBytesProduced: re.stdoutBytesProduced,
      stderrBytesProduced: re.stderrBytesProduced,
    });
    expect(ge.exitCode).toBe(3);

    // Files cross transports: written by one, read back by the other.
    const bytes = Buffer.from([0, 1, 2, 250, 255, 10]);
    expect(await g.unary('WriteFile', { sandboxId: viaGrpc, path: '/tmp/g.bin', content: bytes }, c.token)).toEqual({});
    expect(Buffer.from(((await rest('GET', `/v1/sandboxes/${viaGrpc}:readFile?path=/tmp/g.bin`)).json as { content: string }).content, 'base64')).toEqual(bytes);
    expect((await rest('POST', `/v1/sandboxes/${viaGrpc}:writeFile`, { path: '/tmp/r.bin', content: bytes.toString('base64') })).status).toBe(200);
    expect(Buffer.from((await g.unary('ReadFile', { sandboxId: viaGrpc, path: '/tmp/r.bin' }, c.token)).content as Uint8Array)).toEqual(bytes);

    const restList = (await rest('GET', `/v1/sandboxes?tags=${tag}`)).json as { sandboxes: { sandboxId: string }[] };
    const grpcList = await g.unary('ListSandboxes', { tags: [tag] }, c.token);
    expect((grpcList.sandboxes as Wire[]).map((s) => s.sandboxId).sort()).toEqual(restList.sandboxes.map((s) => s.sandboxId).sort());
    expect(restList.sandboxes).toHaveLength(2);
    const running = await g.unary('ListSandboxes', { tags: [tag], state: 'STATE_RUNNING' }, c.token);
    expect(running.sandboxes).toHaveLength(2);

    // Errors: the same code, message, reason and field violations.
    const cases: { rest: [string, string, unknown?]; grpc: [string, Wire] }[] = [
      { rest: ['GET', '/v1/sandboxes/sb-missing'], grpc: ['GetSandbox', { sandboxId: 'sb-missing' }] },
      { rest: ['POST', '/v1/sandboxes/sb-missing:exec', { command: ['true'] }], grpc: ['Exec', { sandboxId: 'sb-missing', command: ['true'] }] },
      { rest: ['POST', `/v1/sandboxes/${viaGrpc}:exec`, { command: [] }], grpc: ['Exec', { sandboxId: viaGrpc, command: [] }] },
      { rest: ['GET', `/v1/sandboxes/${viaGrpc}:readFile?path=/tmp/none`], grpc: ['ReadFile', { sandboxId: viaGrpc, path: '/tmp/none' }] },
      { rest: ['GET', `/v1/sandboxes/${viaGrpc}:readFile?path=relative`], grpc: ['ReadFile', { sandboxId: viaGrpc, path: 'relative' }] },
      {
        rest: ['POST', '/v1/sandboxes', { sandbox: { spec: { containers: [{ ...SLEEPER, resources: { cpu: 'lots' } }] } } }],
        grpc: ['CreateSandbox', { sandbox: { spec: { containers: [{ ...SLEEPER, resources: { cpu: 'lots' } }] } } }],
      },
      {
        rest: ['POST', '/v1/sandboxes', { sandbox: { spec: { containers: [{ ...SLEEPER, resources: { cpu: '64' } }] } } }],
        grpc: ['CreateSandbox', { sandbox: { spec: { containers: [{ ...SLEEPER, resources: { cpu: '64' } }] } } }],
      },
      { rest: ['DELETE', '/v1/sandboxes/sb-missing'], grpc: ['DeleteSandbox', { sandboxId: 'sb-missing' }] },
      { rest: ['POST', '/v1/sandboxes:purge', {}], grpc: ['PurgeSandboxes', {}] },
      { rest: ['POST', '/v1/sandboxes:purge', { tags: [tag], purgeAll: true }], grpc: ['PurgeSandboxes', { tags: [tag], purgeAll: true }] },
      { rest: ['POST', '/v1/sandboxes:purge', { tags: [tag], requestId: 'r-1' }], grpc: ['PurgeSandboxes', { tags: [tag], requestId: 'r-1' }] },
    ];
    for (const k of cases) {
      const r = await rest(...k.rest);
      expect(r.status).toBeGreaterThanOrEqual(400);
      const s = await grpcError(g.unary(k.grpc[0], k.grpc[1], c.token));
      expect({ call: k.grpc[0], ...grpcErrorFacts(s) }).toEqual({ call: k.grpc[0], ...restErrorFacts(r.json) });
    }

    // Purge (dry run), then delete: the same counts and the same resulting sandboxes.
    const restPurge = (await rest('POST', '/v1/sandboxes:purge', { tags: [tag], dryRun: true })).json;
    expect(await g.unary('PurgeSandboxes', { tags: [tag], dryRun: true }, c.token)).toEqual({ ...(restPurge as object) });
    expect((restPurge as { purgeCount: number }).purgeCount).toBe(2);
    const gd = await g.unary('DeleteSandbox', { sandboxId: viaGrpc, gracePeriodSeconds: 0 }, c.token);
    const rd = (await rest('DELETE', `/v1/sandboxes/${viaRest.sandboxId}?gracePeriodSeconds=0`)).json as { sandbox: { sandboxId: string; status: { state: string } } };
    expect((gd.sandbox as Wire).sandboxId).toBe(viaGrpc);
    // A stop answers while it drains or once it ended, whichever the runner reached first.
    const stopped = ['STATE_TERMINATING', 'STATE_COMPLETED'];
    expect(stopped).toContain(((gd.sandbox as Wire).status as Wire).state);
    expect(stopped).toContain(rd.sandbox.status.state);
    expect(gd.fileSystemSnapshotIds).toEqual([]);
    const gone = await g.unary('DeleteSandbox', { sandboxId: 'sb-missing', allowMissing: true }, c.token);
    expect(gone.sandbox).toBeNull();
    expect((await rest('DELETE', '/v1/sandboxes/sb-missing?allowMissing=true')).json).toEqual({});
    const snap = await grpcError(g.unary('DeleteSandbox', { sandboxId: viaGrpc, snapshotVolumes: ['workspace'] }, c.token));
    expect([snap.code, snap.reason]).toEqual([GRPC.UNIMPLEMENTED, 'CWSANDBOX_NOT_IMPLEMENTED']);
    expect(snap.message).toContain('snapshot_volumes');
  });

  it('StreamExec carries stdin, close, resize and separate stdout/stderr, ready first and exit last', async () => {
    const id = await createRunning();
    const call = g.raw.streamExec(metadataWith(c.token));
    const result = collectStream(call);
    call.write({ init: { sandboxId: id, command: ['/bin/sh', '-c', 'cat; echo done >&2; exit 7'] } });
    call.write({ resize: { width: 100, height: 40 } });
    call.write({ stdin: Buffer.from('hello ') });
    call.write({ stdin: Buffer.from('world\n') });
    call.write({ close: {} });
    const { messages, error } = await result;
    expect(error).toBeUndefined();
    expect(messages[0]?.message).toBe('ready');
    expect(messages.at(-1)?.message).toBe('exit');
    expect((messages.at(-1)?.exit as Wire).exitCode).toBe(7);
    const outputs = messages.filter((m) => m.message === 'output').map((m) => m.output as Wire);
    expect(text(outputs.filter((o) => o.stream === 'STREAM_STDOUT'), (o) => o.data)).toBe('hello world\n');
    expect(text(outputs.filter((o) => o.stream === 'STREAM_STDERR'), (o) => o.data)).toBe('done\n');

    // Ending the request stream is end of input too (a client that half-closes after init).
    const eof = g.raw.streamExec(metadataWith(c.token));
    const eofResult = collectStream(eof);
    eof.write({ init: { sandboxId: id, command: ['/bin/sh', '-c', 'wc -c'] } });
    eof.write({ stdin: Buffer.alloc(200_000, 97) });
    eof.end();
    const eofMsgs = (await eofResult).messages;
    expect(text(eofMsgs.filter((m) => m.message === 'output').map((m) => m.output as Wire), (o) => o.data).trim()).toBe('200000');

    const bad = g.raw.streamExec(metadataWith(c.token));
    const badResult = collectStream(bad);
    bad.write({ stdin: Buffer.from('x') });
    const badStatus = (await badResult).error as DecodedStatus;
    expect([badStatus.code, badStatus.reason, badStatus.violations?.[0]?.field]).toEqual([GRPC.INVALID_ARGUMENT, 'CWSANDBOX_INVALID_REQUEST', 'init']);
  });

  it('a client that disconnects mid-stream stops its command on the runner', async () => {
    const id = await createRunning();
    const call = g.raw.streamExec(metadataWith(c.token));
    const started = collectStream(call, (all) => all.some((m) => m.message === 'output'));
    call.write({ init: { sandboxId: id, command: ['/bin/sh', '-c', 'echo started; exec sleep 987'] } });
    const { messages } = await started;
    expect(text(messages.filter((m) => m.message === 'output').map((m) => m.output as Wire), (o) => o.data)).toBe('started\n');
    const count = async (): Promise<string> => {
      const res = await g.unary('Exec', { sandboxId: id, command: ['/bin/sh', '-c', "for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline 2>/dev/null; echo; done | grep -c '[s]leep 987'"] }, c.token);
      return Buffer.from(res.stdout as Uint8Array).toString().trim();
    };
    await waitFor(async () => (await count()) === '0', { timeoutMs: 20_000, intervalMs: 200, what: 'the disconnected command to be killed' });
  });

  it('StreamLogs follows, resumes at next_log_offset without gap or repeat, and refuses bad resumes by field', async () => {
    const id = await createRunning({ image: IMAGE, command: '/bin/sh', args: ['-c', 'for i in 1 2 3 4 5 6; do echo line$i; sleep 0.3; done; sleep 600'] });
    const first = await collectStream(g.raw.streamLogs({ sandboxId: id, follow: true }, metadataWith(c.token)), (all) => text(all, (m) => m.data).includes('line2'));
    const last = first.messages.at(-1) as Wire;
    expect(last.logSessionId).toBe(id);
    const resumed = await collectStream(
      g.raw.streamLogs({ sandboxId: id, follow: true, resumeLogSessionId: last.logSessionId, resumeLogOffset: last.nextLogOffset }, metadataWith(c.token)),
      (all) => text(all, (m) => m.data).includes('line6'),
    );
    expect(text(first.messages, (m) => m.data) + text(resumed.messages, (m) => m.data)).toBe('line1\nline2\nline3\nline4\nline5\nline6\n');

    // Without follow the stream ends by itself, with what REST's NDJSON route returns.
    const whole = await collectStream(g.raw.streamLogs({ sandboxId: id }, metadataWith(c.token)));
    expect(whole.error).toBeUndefined();
    const ndjson = await fetch(`${c.gw.url}/v1/sandboxes/${id}/logs`, { headers: { authorization: `Bearer ${c.token}` } });
    const restText = Buffer.concat((await ndjson.text()).trim().split('\n').map((l) => Buffer.from((JSON.parse(l) as { data: string }).data, 'base64'))).toString();
    expect(text(whole.messages, (m) => m.data)).toBe(restText);

    const stamped = await collectStream(g.raw.streamLogs({ sandboxId: id, timestamps: true, tailLines: 2 }, metadataWith(c.token)));
    const lines = text(stamped.messages, (m) => m.data).trim().split('\n');
    expect(lines.length).toBeGreaterThan(0);
    for (const l of lines) expect(l).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z line\d$/);

    const conflict = await collectStream(g.raw.streamLogs({ sandboxId: id, follow: true, timestamps: true, resumeLogOffset: '3' }, metadataWith(c.token)));
    expect([conflict.error?.code, conflict.error?.violations?.map((v) => v.field)]).toEqual([GRPC.INVALID_ARGUMENT, ['timestamps']]);
    const noFollow = await collectStream(g.raw.streamLogs({ sandboxId: id, resumeLogOffset: '3' }, metadataWith(c.token)));
    expect(noFollow.error?.violations?.map((v) => v.field)).toEqual(['follow']);
    const foreign = await collectStream(g.raw.streamLogs({ sandboxId: id, follow: true, resumeLogSessionId: 'another', resumeLogOffset: '3' }, metadataWith(c.token)));
    expect(foreign.messages).toHaveLength(1);
    expect((foreign.messages[0]?.error as Wire).code).toBe('SESSION_NOT_FOUND');
    const other = await grpcError(g.unary('Exec', { sandboxId: id, command: ['true'], container: 'sidecar' }, c.token));
    expect([other.code, other.violations?.[0]?.field]).toEqual([GRPC.INVALID_ARGUMENT, 'container']);
  });

  it('answers UNIMPLEMENTED with reason CWSANDBOX_NOT_IMPLEMENTED for templates, Compose files, direct connections and snapshots', async () => {
    const calls: [string, Wire][] = [
      ['CreateSandboxFromTemplate', { templateId: 'tpl' }],
      ['CreateSandboxFromFile', {}],
      ['ConnectSandbox', { sandboxId: 'x' }],
      ['CreateFileSystemSnapshot', { sandboxId: 'x' }],
      ['GetFileSystemSnapshot', { fileSystemSnapshotId: 'x' }],
      ['ListFileSystemSnapshots', {}],
      ['DeleteFileSystemSnapshot', { fileSystemSnapshotId: 'x' }],
      ['ListSandboxes', { volumeIds: ['v'] }],
    ];
    for (const [method, req] of calls) {
      const s = await grpcError(g.unary(method, req, c.token));
      expect({ method, code: s.code, reason: s.reason, retry: s.retryDelaySeconds }).toEqual({ method, code: GRPC.UNIMPLEMENTED, reason: 'CWSANDBOX_NOT_IMPLEMENTED', retry: undefined });
    }
  });

  it('serves the Connect protocol (HTTP/1.1 + JSON) at the same service paths on the REST port', async () => {
    const client = connectClient(c.gw.url, c.token);
    const sb = await client.createSandbox({ sandbox: { spec: { containers: [{ image: IMAGE, command: '/bin/sh', args: ['-c', 'sleep 600'] }] } } });
    await rest('GET', `/v1/sandboxes/${sb.sandboxId}:wait?timeoutSeconds=60`);
    const out = await client.exec({ sandboxId: sb.sandboxId, command: ['/bin/echo', 'connect'] });
    expect([out.exitCode, Buffer.from(out.stdout).toString()]).toEqual([0, 'connect\n']);
    await client.writeFile({ sandboxId: sb.sandboxId, path: '/tmp/c.txt', content: Buffer.from('via connect') });
    expect(Buffer.from((await client.readFile({ sandboxId: sb.sandboxId, path: '/tmp/c.txt' })).content).toString()).toBe('via connect');
    const err = await client.getSandbox({ sandboxId: 'sb-missing' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConnectError);
    const ce = err as ConnectError;
    const restNotFound = restErrorFacts((await rest('GET', '/v1/sandboxes/sb-missing')).json);
    expect([ce.code, ce.rawMessage, ce.findDetails(ErrorInfoSchema)[0]?.reason]).toEqual([Code.NotFound, restNotFound.message, restNotFound.reason]);

    // Connect over HTTP/2 on the gRPC port answers the same.
    const h2 = connectClient(c.gw.grpc.url, c.token, '2');
    expect(Buffer.from((await h2.readFile({ sandboxId: sb.sandboxId, path: '/tmp/c.txt' })).content).toString()).toBe('via connect');

    // A hand-written Connect request: an auth failure is REST's 401 JSON, code and message alike.
    const raw = await fetch(`${c.gw.url}/coreweave.sandbox.v1.SandboxService/GetSandbox`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'connect-protocol-version': '1' },
      body: JSON.stringify({ sandboxId: sb.sandboxId }),
    });
    const restUnauth = await rest('GET', '/v1/sandboxes', undefined, '');
    expect(raw.status).toBe(restUnauth.status);
    expect(await raw.json()).toEqual({ code: 'unauthenticated', message: (restUnauth.json as RestError).message });
  });

  it('runs the TypeScript SDK quick start as the SDK sends it: default image python:3.11 (aliased), run, write, read, stop', async () => {
    // The CreateSandboxRequest the SDK builds for `client.create()` with no options.
    const sb = await g.unary(
      'CreateSandbox',
      {
        requestId: randomUUID(),
        sandbox: {
          spec: {
            annotations: {},
            containers: [{ name: 'main', image: 'python:3.11', command: '/bin/sh', args: ['-c', 'trap "exit 0" TERM INT; sleep infinity & wait'], environmentVariables: {}, files: [], secretStores: [] }],
            primaryContainer: 'main',
            services: [],
            tags: [],
          },
        },
      },
      c.token,
    );
    const id = sb.sandboxId as string;
    await waitFor(async () => ((await g.unary('GetSandbox', { sandboxId: id }, c.token)).status as Wire).state === 'STATE_RUNNING', { timeoutMs: 60_000, intervalMs: 200, what: 'RUNNING' });
    const run = await g.unary('Exec', { sandboxId: id, command: ['/bin/echo', 'hello from paddock'] }, c.token);
    expect([run.exitCode, Buffer.from(run.stdout as Uint8Array).toString()]).toEqual([0, 'hello from paddock\n']);
    await g.unary('WriteFile', { sandboxId: id, path: '/tmp/hello.txt', content: Buffer.from('hi'), container: 'main' }, c.token);
    expect(Buffer.from((await g.unary('ReadFile', { sandboxId: id, path: '/tmp/hello.txt', container: 'main' }, c.token)).content as Uint8Array).toString()).toBe('hi');
    const got = await g.unary('GetSandbox', { sandboxId: id }, c.token);
    expect([(got.spec as { containers: Wire[] }).containers[0]?.image, (got.spec as Wire).primaryContainer]).toEqual(['python:3.11', 'main']);
    await g.unary('DeleteSandbox', { sandboxId: id, gracePeriodSeconds: 10 }, c.token);
    await waitFor(async () => ((await g.unary('GetSandbox', { sandboxId: id }, c.token)).status as Wire).state === 'STATE_COMPLETED', { timeoutMs: 30_000, intervalMs: 200, what: 'stopped' });
  });

  it('serves TLS (h2 for gRPC, HTTP/1.1 for Connect) when the gateway has a certificate', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'paddock-grpc-tls-'));
    try {
      const cert = join(dir, 'cert.pem');
      const key = join(dir, 'key.pem');
      execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', key, '-out', cert, '-days', '1', '-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1'], { stdio: 'ignore' });
      const tlsGw = await startGateway(c.infra, { GATEWAY_GRPC_TLS_CERT: cert, GATEWAY_GRPC_TLS_KEY: key });
      try {
        expect(tlsGw.grpc.url).toMatch(/^https:/);
        const client = grpcClient(tlsGw.grpc.url, readFileSync(cert));
        try {
          const s = await grpcError(client.unary('GetSandbox', { sandboxId: 'sb-missing' }, c.token));
          expect([s.code, s.reason]).toEqual([GRPC.NOT_FOUND, 'CWSANDBOX_SANDBOX_NOT_FOUND']);
        } finally {
          client.close();
        }
        const res = await new Promise<{ status: number; body: string }>((resolve, reject) => {
          const req = https.request(`${tlsGw.grpc.url}/coreweave.sandbox.v1.SandboxService/ListSandboxes`, { method: 'POST', ca: readFileSync(cert), headers: { 'content-type': 'application/json', authorization: `Bearer ${c.token}` } }, (r) => {
            let body = '';
            r.on('data', (d: Buffer) => (body += d.toString()));
            r.on('end', () => resolve({ status: r.statusCode ?? 0, body }));
          });
          req.on('error', reject);
          req.end('{}');
        });
        expect(res.status).toBe(200);
        expect(JSON.parse(res.body)).toHaveProperty('sandboxes');
      } finally {
        await tlsGw.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
