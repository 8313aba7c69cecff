import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileSystemSnapshots, PaddockClient, Sandbox } from '@paddock/sdk';
import { IMAGE, useCluster } from './support/cluster';
import { http } from './support/infra';

interface ErrorBody {
  details?: { reason?: string; fieldViolations?: { field: string; rule: string }[] }[];
}
interface Snapshot {
  fileSystemSnapshotId: string;
  state: string;
  stateReason?: string;
  sizeBytes: number;
  sourceSandboxId: string;
  sourceVolumeName: string;
  trigger: string;
  requestId?: string;
}

const reasonOf = (b: unknown): string | undefined => (b as ErrorBody).details?.find((d) => d.reason)?.reason;
const fieldsOf = (b: unknown): string[] => ((b as ErrorBody).details ?? []).flatMap((d) => (d.fieldViolations ?? []).map((v) => v.field));
const MIB = 1024 * 1024;
/** Every path of the disk with type, mode, size and link target, then every file's digest. */
const MANIFEST = "cd / && find workspace tmp -printf '%p %y %m %s %l\\n' | sort && find workspace tmp -type f -print0 | sort -z | xargs -0 -r sha256sum";
// Both runners point at one store: the embedded default shares it between a machine's runners.
const STORE = mkdtempSync(join(tmpdir(), 'paddock-gw-snapshots-'));
const POLICY = { constraints: { resources: { maxCpu: '1', maxMemory: '1Gi', defaultCpu: '500m', defaultMemory: '768Mi' } } };

/** File-system snapshots through the gateway, captured on one runner and restored on another. */
describe('gateway: file-system snapshots', () => {
  const cluster = useCluster({ runnerIds: ['r-snap-a', 'r-snap-b'], policies: { 'r-snap-a': POLICY, 'r-snap-b': POLICY }, runnerEnv: { PADDOCK_SNAPSHOT_STORE_DIR: STORE } });
  afterAll(() => rmSync(STORE, { recursive: true, force: true }));

  const client = (): PaddockClient => new PaddockClient({ baseUrl: cluster().gw.url, apiKey: cluster().token });
  const sh = async (sb: Sandbox, script: string): Promise<string> => {
    const r = await sb.exec(['/bin/sh', '-c', script]).result();
    if (r.exitCode !== 0) throw new Error(`${script}: ${r.stderrText}`);
    return r.stdoutText;
  };
  const start = async (runnerId: string, restoreFrom?: string): Promise<Sandbox> => {
    const spec = {
      containers: [{ image: IMAGE, command: ['sleep', '1000'] }],
      ...(restoreFrom ? { volumes: [{ name: 'workspace', scratch: { restoreFromSnapshotId: restoreFrom } }] } : {}),
    };
    const sb = await Sandbox.create(spec, { client: client(), runnerIds: [runnerId] });
    await sb.wait();
    return sb;
  };
  const snapshot = async (id: string): Promise<Snapshot> => (await http(cluster().gw.url, 'GET', `/v1/fileSystemSnapshots/${id}`, cluster().token)).json as Snapshot;
  const ready = async (id: string): Promise<Snapshot> => {
    await expect.poll(async () => (await snapshot(id)).state, { timeout: 60_000 }).toBe('SNAPSHOT_STATE_READY');
    return snapshot(id);
  };
  /** Stops the sandbox with its disk snapshotted: the receipt names one snapshot, already READY. */
  const stopWithSnapshot = async (sb: Sandbox): Promise<string> => {
    const c = cluster();
    const r = await http(c.gw.url, 'DELETE', `/v1/sandboxes/${sb.sandboxId}?snapshotVolumes=workspace`, c.token);
    expect(r.status).toBe(200);
    const body = r.json as { sandbox: { status: { state: string } }; fileSystemSnapshotIds: string[] };
    expect(body.fileSystemSnapshotIds).toHaveLength(1);
    expect(['STATE_TERMINATING', 'STATE_COMPLETED']).toContain(body.sandbox.status.state);
    const id = body.fileSystemSnapshotIds[0] as string;
    expect(await ready(id)).toMatchObject({ trigger: 'SNAPSHOT_TRIGGER_ON_DELETE', sourceSandboxId: sb.sandboxId, sourceVolumeName: 'workspace' });
    return id;
  };

  it('keeps every byte, mode, empty directory and link across runners and three generations; stop with snapshotVolumes returns the ids', async () => {
    const c = cluster();
    const gen1 = await start('r-snap-a');
    await sh(
      gen1,
      [
        'head -c 104857600 /dev/urandom > /workspace/big.bin',
        'mkdir -p /workspace/empty /workspace/deep/a/b && chmod 0700 /workspace/empty',
        'printf hello > /workspace/deep/a/b/hello.txt && chmod 0640 /workspace/deep/a/b/hello.txt',
        'printf x > /workspace/run.sh && chmod 0755 /workspace/run.sh',
        ': > /workspace/zero && ln -s deep/a/b/hello.txt /workspace/link && printf t > /tmp/in-tmp',
      ].join(' && '),
    );
    const m1 = await sh(gen1, MANIFEST);
    expect(m1).toContain('workspace/big.bin f 644 104857600');
    expect(m1).toContain('workspace/empty d 700');

    // A manual snapshot, idempotent by requestId.
    const made = await http(c.gw.url, 'POST', `/v1/sandboxes/${gen1.sandboxId}:snapshot`, c.token, { requestId: 'manual-1' });
    expect(made.status).toBe(200);
    const manual = made.json as Snapshot;
    expect(manual).toMatchObject({ state: 'SNAPSHOT_STATE_CREATING', trigger: 'SNAPSHOT_TRIGGER_MANUAL', sourceVolumeName: 'workspace', requestId: 'manual-1' });
    const replay = await http(c.gw.url, 'POST', `/v1/sandboxes/${gen1.sandboxId}:snapshot`, c.token, { requestId: 'manual-1' });
    expect((replay.json as Snapshot).fileSystemSnapshotId).toBe(manual.fileSystemSnapshotId);
    const reused = await http(c.gw.url, 'POST', `/v1/sandboxes/${gen1.sandboxId}:snapshot`, c.token, { requestId: 'manual-1', scratchVolumeName: 'other' });
    expect(reused.status).toBe(400);
    expect(fieldsOf(reused.json)).toEqual(['requestId']);
    expect((await ready(manual.fileSystemSnapshotId)).sizeBytes).toBeGreaterThan(100 * MIB);
    const listed = await http(c.gw.url, 'GET', `/v1/fileSystemSnapshots?sourceSandboxId=${gen1.sandboxId}`, c.token);
    expect((listed.json as { fileSystemSnapshots: Snapshot[] }).fileSystemSnapshots.map((s) => s.fileSystemSnapshotId)).toEqual([manual.fileSystemSnapshotId]);

    const snap1 = await stopWithSnapshot(gen1);
    // Generation 2 on the other runner: identical; then changed.
    const gen2 = await start('r-snap-b', snap1);
    expect((await gen2.refresh()).status.runnerId).toBe('r-snap-b');
    expect(await sh(gen2, MANIFEST)).toBe(m1);
    await sh(gen2, 'printf two > /workspace/gen2.txt && rm /workspace/zero && chmod 0600 /workspace/deep/a/b/hello.txt && mkdir /workspace/gen2-empty');
    const m2 = await sh(gen2, MANIFEST);
    const snap2 = await stopWithSnapshot(gen2);

    // Generation 3, back on the first runner: generation 2's changes are all there; changed again.
    const gen3 = await start('r-snap-a', snap2);
    expect(await sh(gen3, MANIFEST)).toBe(m2);
    await sh(gen3, 'printf three >> /workspace/gen2.txt && rm -r /workspace/empty && truncate -s 1M /workspace/big.bin');
    const m3 = await sh(gen3, MANIFEST);
    const snap3 = await stopWithSnapshot(gen3);
    const gen4 = await start('r-snap-b', snap3);
    expect(await sh(gen4, MANIFEST)).toBe(m3);
    expect(m3).toContain('workspace/gen2.txt f 644 8');
    expect(m3).not.toContain('workspace/empty d');
    await gen4.stop();

    // Deleting a snapshot: gone, then not found, and allowMissing makes that a success.
    const del = await http(c.gw.url, 'DELETE', `/v1/fileSystemSnapshots/${manual.fileSystemSnapshotId}`, c.token);
    expect(del.status).toBe(200);
    expect((del.json as Snapshot).state).toBe('SNAPSHOT_STATE_DELETING');
    expect((await http(c.gw.url, 'GET', `/v1/fileSystemSnapshots/${manual.fileSystemSnapshotId}`, c.token)).status).toBe(404);
    expect((await http(c.gw.url, 'DELETE', `/v1/fileSystemSnapshots/${manual.fileSystemSnapshotId}`, c.token)).status).toBe(404);
    const missingOk = await http(c.gw.url, 'DELETE', `/v1/fileSystemSnapshots/${manual.fileSystemSnapshotId}?allowMissing=true`, c.token);
    expect(missingOk.status).toBe(200);
    expect(missingOk.json).toEqual({});
  }, 300_000);

  it('the SDK snapshots, restores and stops with a snapshot', async () => {
    const sb = await start('r-snap-a');
    await sb.writeFile('/workspace/note.txt', 'from the sdk');
    const snap = await sb.snapshot({ requestId: 'sdk-1' });
    expect(snap).toMatchObject({ state: 'SNAPSHOT_STATE_READY', sourceSandboxId: sb.sandboxId });
    expect((await FileSystemSnapshots.list({ client: client(), sourceSandboxId: sb.sandboxId })).map((s) => s.fileSystemSnapshotId)).toEqual([snap.fileSystemSnapshotId]);
    await sb.writeFile('/workspace/note.txt', 'changed after');
    const [onStop] = await sb.stopWithSnapshot();
    const restored = await Sandbox.create({ containers: [{ image: IMAGE, command: ['sleep', '1000'] }] }, { client: client(), runnerIds: ['r-snap-b'], fileSystemSnapshotId: snap.fileSystemSnapshotId });
    await restored.wait();
    expect((await restored.readFile('/workspace/note.txt')).toString()).toBe('from the sdk');
    await restored.stop();
    expect((await FileSystemSnapshots.waitReady(onStop as string, { client: client() })).trigger).toBe('SNAPSHOT_TRIGGER_ON_DELETE');
    await FileSystemSnapshots.delete(snap.fileSystemSnapshotId, { client: client() });
    await FileSystemSnapshots.delete(snap.fileSystemSnapshotId, { client: client(), missingOk: true });
  }, 120_000);

  it('refuses restores of unknown snapshots and snapshots of unknown volumes, naming the field', async () => {
    const c = cluster();
    const restore = await http(c.gw.url, 'POST', '/v1/sandboxes', c.token, {
      spec: { containers: [{ image: IMAGE }], volumes: [{ name: 'workspace', scratch: { restoreFromSnapshotId: 'no-such-snapshot' } }] },
    });
    expect(restore.status).toBe(400);
    expect(reasonOf(restore.json)).toBe('CWSANDBOX_FSS_NOT_FOUND');
    expect(fieldsOf(restore.json)).toEqual(['volumes[0].scratch.restoreFromSnapshotId']);

    const sb = await start('r-snap-a');
    const unknown = await http(c.gw.url, 'DELETE', `/v1/sandboxes/${sb.sandboxId}?snapshotVolumes=nope`, c.token);
    expect(unknown.status).toBe(400);
    expect(fieldsOf(unknown.json)).toEqual(['snapshotVolumes[0]']);
    // Refused before anything stopped: the sandbox still runs.
    expect((await sb.refresh()).status.state).toBe('STATE_RUNNING');
    const missing = await http(c.gw.url, 'GET', '/v1/fileSystemSnapshots/no-such-snapshot', c.token);
    expect(missing.status).toBe(404);
    expect(reasonOf(missing.json)).toBe('CWSANDBOX_FSS_NOT_FOUND');
    await sb.stop();
  }, 120_000);
});
