import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { LocalSnapshotStore } from '../../src/snapshots/local-store';
import { SnapshotTooLargeError } from '../../src/snapshots/snapshot-store';
import { RunnerSnapshots } from '../../src/service/snapshots';
import { destroyBackend, launchRunning, makeBackend, spec, type TestBackend } from './helpers';

const ORG = 'org-test';
const MIB = 1024 * 1024;
const BIG = { cpuMillis: 1000, memoryBytes: 768 * MIB, diskBytes: 384 * MIB, command: ['sleep', '1000'] };
const SPEC = { containers: [{ name: 'main' }] };

async function sh(t: TestBackend, id: string, script: string): Promise<string> {
  const r = await t.backend.exec(id, { argv: ['/bin/sh', '-c', script], maxOutputBytes: 4 * MIB, timeoutMs: 120_000 });
  if (r.exitCode !== 0) throw new Error(`${script}: exit ${r.exitCode}: ${r.stderr.toString()}`);
  return r.stdout.toString();
}

/** Every path under the disk with its type, mode, size and link target, plus every file's digest. */
const MANIFEST =
  "cd / && find workspace tmp -printf '%p %y %m %s %l\\n' | sort && find workspace tmp -type f -print0 | sort -z | xargs -0 -r sha256sum";

describe('local backend: file-system snapshots of the sandbox disk', () => {
  it('the store takes a streamed archive whole or not at all, within its size limit', async () => {
    const storeDir = mkdtempSync(join(tmpdir(), 'paddock-snapshots-'));
    try {
      const store = new LocalSnapshotStore(storeDir);
      const meta = { v: 1 as const, organizationId: ORG, sourceSandboxId: 'sb', volumeName: 'workspace', format: 'tar' as const, createdAt: new Date().toISOString() };
      const chunks = (n: number): Readable => Readable.from(Array.from({ length: n }, () => Buffer.alloc(64 * 1024, 7)));
      expect((await store.put({ ...meta, snapshotId: 'streamed' }, chunks(16), MIB)).sizeBytes).toBe(MIB);
      expect(await store.head(ORG, 'streamed')).toMatchObject({ sizeBytes: MIB, sourceSandboxId: 'sb' });
      await expect(store.put({ ...meta, snapshotId: 'too-big' }, chunks(17), MIB)).rejects.toBeInstanceOf(SnapshotTooLargeError);
      expect(await store.head(ORG, 'too-big')).toBeUndefined();
      expect(await store.head('org-other', 'streamed')).toBeUndefined();
    } finally {
      rmSync(storeDir, { recursive: true, force: true });
    }
  });

  it('restores every byte, mode, empty directory and link onto a new sandbox of another runner, over three generations', async () => {
    const storeDir = mkdtempSync(join(tmpdir(), 'paddock-snapshots-'));
    const store = new LocalSnapshotStore(storeDir);
    const a = makeBackend();
    const b = makeBackend();
    const snapsA = new RunnerSnapshots(a.backend, store);
    const snapsB = new RunnerSnapshots(b.backend, store);
    try {
      await launchRunning(a, spec('gen-1', BIG));
      await sh(
        a,
        'gen-1',
        [
          'head -c 104857600 /dev/urandom > /workspace/big.bin',
          'mkdir -p /workspace/empty /workspace/deep/a/b',
          'printf hello > /workspace/deep/a/b/hello.txt && chmod 0640 /workspace/deep/a/b/hello.txt',
          'printf x > /workspace/exec.sh && chmod 0755 /workspace/exec.sh',
          ': > /workspace/zero',
          'ln -s deep/a/b/hello.txt /workspace/link',
          'chmod 0700 /workspace/empty',
          'printf t > /tmp/in-tmp',
        ].join(' && '),
      );
      const before = await sh(a, 'gen-1', MANIFEST);
      expect(before).toContain('workspace/empty d 700');
      expect(before).toContain('workspace/link l 777 18 deep/a/b/hello.txt');

      const first = await snapsA.capture({ sandboxId: 'gen-1', organizationId: ORG, snapshotId: 'snap-1' }, SPEC, 'gen-1');
      expect(first.sizeBytes).toBeGreaterThan(100 * MIB);
      expect(first.frozenMs).toBeGreaterThan(0);
      // The sandbox runs on after the capture.
      expect(await sh(a, 'gen-1', 'echo alive')).toBe('alive\n');

      // Generation 2, on the other runner: identical, then changed and captured again.
      const restore1 = await snapsB.restoreArchiveFor(ORG, { containers: [{ name: 'main' }], volumes: [{ name: 'workspace', scratch: { restoreFromSnapshotId: 'snap-1' } }] }, '/tmp');
      await launchRunning(b, spec('gen-2', { ...BIG, ...(restore1 ? { restoreArchive: restore1 } : {}) }));
      expect(await sh(b, 'gen-2', MANIFEST)).toBe(before);
      await sh(b, 'gen-2', 'printf second > /workspace/gen2.txt && rm /workspace/zero && mkdir /workspace/empty2 && chmod 0600 /workspace/deep/a/b/hello.txt');
      const second = await sh(b, 'gen-2', MANIFEST);
      await snapsB.capture({ sandboxId: 'gen-2', organizationId: ORG, snapshotId: 'snap-2' }, SPEC, 'gen-2');

      // Generation 3, back on the first runner: every change of generation 2 is there.
      const restore2 = await snapsA.restoreArchiveFor(ORG, { containers: [{ name: 'main' }], volumes: [{ name: 'workspace', scratch: { restoreFromSnapshotId: 'snap-2' } }] }, '/tmp');
      await launchRunning(a, spec('gen-3', { ...BIG, ...(restore2 ? { restoreArchive: restore2 } : {}) }));
      const third = await sh(a, 'gen-3', MANIFEST);
      expect(third).toBe(second);
      expect(third).toContain('workspace/gen2.txt f 644 6');
      expect(third).not.toContain('workspace/zero');
      expect(third).toContain('workspace/deep/a/b/hello.txt f 600 5');

      // Another organization's id restores nothing.
      await expect(snapsA.restoreArchiveFor('org-other', { volumes: [{ name: 'workspace', scratch: { restoreFromSnapshotId: 'snap-2' } }] } as never, '/tmp')).rejects.toMatchObject({ reason: 'CWSANDBOX_FSS_NOT_FOUND' });
      // Size limits hold: nothing is kept of a capture over its limit.
      await expect(snapsA.capture({ sandboxId: 'gen-3', organizationId: ORG, snapshotId: 'snap-small', maxBytes: MIB }, SPEC, 'gen-3')).rejects.toMatchObject({
        reason: 'CWSANDBOX_FSS_SIZE_EXCEEDED',
      });
      expect(await store.head(ORG, 'snap-small')).toBeUndefined();
      // Registered volumes are never snapshotted; unknown names are errors.
      await expect(snapsA.capture({ sandboxId: 'gen-3', organizationId: ORG, snapshotId: 'x', volumeName: 'shared' }, { containers: [], volumes: [{ name: 'shared', volumeId: 'vol-1' }] }, 'gen-3')).rejects.toMatchObject({
        reason: 'CWSANDBOX_VOLUME_NOT_SNAPSHOTTABLE',
      });
      await expect(snapsA.capture({ sandboxId: 'gen-3', organizationId: ORG, snapshotId: 'x', volumeName: 'nope' }, SPEC, 'gen-3')).rejects.toMatchObject({ reason: 'CWSANDBOX_INVALID_REQUEST' });
      expect(await snapsA.delete({ organizationId: ORG, snapshotId: 'snap-1' })).toEqual({ deleted: true });
      expect(await snapsA.delete({ organizationId: ORG, snapshotId: 'snap-1' })).toEqual({ deleted: false });
    } finally {
      expect(await destroyBackend(a)).toEqual({ leftoverProcesses: [], leftoverCgroups: [] });
      expect(await destroyBackend(b)).toEqual({ leftoverProcesses: [], leftoverCgroups: [] });
      rmSync(storeDir, { recursive: true, force: true });
    }
  }, 240_000);
});
