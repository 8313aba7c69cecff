import { waitFor } from '@paddock/testing';
import type { BackendEvent, LaunchContainer, LogChunk } from '../../src/backend/sandbox-backend';
import {
  destroyBackend,
  launchRunning,
  makeBackend,
  spec,
  waitForState,
  type TestBackend,
} from './helpers';

const MiB = 1024 * 1024;

function container(
  name: string,
  script: string,
  over: Partial<LaunchContainer> = {},
): LaunchContainer {
  return {
    name,
    image: '',
    command: ['sh', '-c', script],
    env: {},
    files: [],
    volumeMounts: [],
    ...over,
  };
}

async function logText(t: TestBackend, id: string, container?: string): Promise<string> {
  const chunks: LogChunk[] = [];
  for await (const c of t.backend.logs(id, container ? { container } : {})) chunks.push(c);
  return Buffer.concat(chunks.map((c) => c.data)).toString();
}

function expectFailure(e: BackendEvent, reason: string, text: string): void {
  expect([e.state, e.reason]).toEqual(['STATE_FAILED', reason]);
  expect(e.message).toContain(text);
}

describe('local backend: several containers, init containers, volumes, startup probe', () => {
  let t: TestBackend;
  beforeAll(() => {
    t = makeBackend({ warmLinks: 0 });
  });
  afterAll(async () => {
    const left = await destroyBackend(t);
    expect(left).toEqual({ leftoverProcesses: [], leftoverCgroups: [] });
  });

  it('a sidecar writes into a shared scratch volume and the primary reads it; they share localhost', async () => {
    const side = container(
      'writer',
      'echo from-sidecar > /shared/note; echo "$ROLE" > /shared/role; cd /shared && exec python3 -m http.server 18081 --bind 127.0.0.1',
      {
        env: { ROLE: 'sidecar-env' },
        volumeMounts: [{ volume: 'scratch', mountPath: '/shared', readOnly: false }],
      },
    );
    const primaryScript = [
      'while [ ! -s /data/note ]; do sleep 0.05; done',
      'cat /data/note',
      // The sidecar's server answers on the sandbox's loopback (one network namespace for both).
      'for i in $(seq 100); do python3 -c "import urllib.request;print(urllib.request.urlopen(\'http://127.0.0.1:18081/role\').read().decode().strip())" 2>/dev/null && break; sleep 0.1; done',
      'sleep 600',
    ].join('; ');
    await launchRunning(
      t,
      spec('pod-share', {
        command: ['sh', '-c', primaryScript],
        primaryName: 'app',
        sidecars: [side],
        volumes: [{ name: 'scratch', medium: 'disk', sizeBytes: 8 * MiB }],
        volumeMounts: [{ volume: 'scratch', mountPath: '/data', readOnly: false }],
      }),
    );
    await waitFor(async () => (await logText(t, 'pod-share')).includes('sidecar-env'), {
      timeoutMs: 20_000,
      what: 'the primary to read the sidecar over localhost',
    });
    expect(await logText(t, 'pod-share')).toBe('from-sidecar\nsidecar-env\n');
    // The sidecar's own log holds its server's access line, not the primary's output.
    expect(await logText(t, 'pod-share', 'writer')).toContain('GET /role');
    // exec takes a container: the sidecar has its own environment and its own /workspace.
    const inSide = await t.backend.exec('pod-share', {
      argv: ['sh', '-c', 'echo "$ROLE"; ls /shared'],
      container: 'writer',
    });
    expect(inSide.stdout.toString()).toBe('sidecar-env\nnote\nrole\n');
    const inPrimary = await t.backend.exec('pod-share', {
      argv: ['sh', '-c', 'echo "[$ROLE]"; ls /data'],
    });
    expect(inPrimary.stdout.toString()).toBe('[]\nnote\nrole\n');
    await expect(
      t.backend.exec('pod-share', { argv: ['true'], container: 'nope' }),
    ).rejects.toMatchObject({ violations: [{ field: 'container' }] });
    expect(t.backend.containerStatuses('pod-share')).toEqual([
      { name: 'app', state: 'running', restartCount: 0 },
      { name: 'writer', state: 'running', restartCount: 0 },
    ]);
    await t.backend.stop('pod-share', 0, 'STOPPED_BY_USER');
    expect(t.backend.containerStatuses('pod-share')?.map((s) => s.state)).toEqual([
      'terminated',
      'terminated',
    ]);
  });

  it('runs init containers in order first; their output is seen by the primary', async () => {
    await t.backend.launch(
      spec('pod-init', {
        command: ['sh', '-c', 'cat /seed/one /seed/two'],
        initContainers: [
          container('first', 'echo one > /out/one', {
            volumeMounts: [{ volume: 'seed', mountPath: '/out', readOnly: false }],
          }),
          container('second', 'test -s /out/one && echo two > /out/two', {
            volumeMounts: [{ volume: 'seed', mountPath: '/out', readOnly: false }],
          }),
        ],
        volumes: [{ name: 'seed', medium: 'memory', sizeBytes: 4 * MiB }],
        volumeMounts: [{ volume: 'seed', mountPath: '/seed', readOnly: true }],
      }),
    );
    const end = await waitForState(t, 'pod-init', ['STATE_COMPLETED', 'STATE_FAILED']);
    expect(end).toMatchObject({ state: 'STATE_COMPLETED', reason: 'EXITED', exitCode: 0 });
    expect(await logText(t, 'pod-init')).toBe('one\ntwo\n');
    expect(t.backend.containerStatuses('pod-init')).toEqual([
      { name: 'first', state: 'terminated', exitCode: 0, restartCount: 0 },
      { name: 'second', state: 'terminated', exitCode: 0, restartCount: 0 },
      { name: 'main', state: 'terminated', exitCode: 0, restartCount: 0 },
    ]);
  });

  it('an init container that fails fails the sandbox with a reason naming it; the primary never starts', async () => {
    await t.backend.launch(
      spec('pod-init-fail', {
        command: ['sh', '-c', 'echo primary-ran'],
        initContainers: [
          container('ok', 'true'),
          container('breaks', 'echo broken >&2; exit 3'),
          container('never', 'true'),
        ],
      }),
    );
    const end = await waitForState(t, 'pod-init-fail', ['STATE_COMPLETED', 'STATE_FAILED']);
    expect(end).toMatchObject({
      state: 'STATE_FAILED',
      reason: 'INIT_CONTAINER_FAILED',
      message: 'init container "breaks" exited with code 3',
    });
    expect(await logText(t, 'pod-init-fail')).toBe('');
    expect(await logText(t, 'pod-init-fail', 'breaks')).toBe('broken\n');
    expect(
      t.backend.containerStatuses('pod-init-fail')?.map((s) => [s.name, s.state, s.exitCode]),
    ).toEqual([
      ['ok', 'terminated', 0],
      ['breaks', 'terminated', 3],
      ['never', 'waiting', undefined],
      ['main', 'terminated', undefined],
    ]);
  });

  it('a stop while an init container runs ends the sandbox as stopped, before the primary starts', async () => {
    await t.backend.launch(spec('pod-init-stop', { command: ['sh', '-c', 'echo primary-ran'], initContainers: [container('slow', 'sleep 60')] }));
    await waitFor(() => t.backend.containerStatuses('pod-init-stop')?.[0]?.state === 'running', { what: 'the init container to run' });
    await t.backend.stop('pod-init-stop', 0, 'STOPPED_BY_USER');
    const end = await waitForState(t, 'pod-init-stop', ['STATE_COMPLETED', 'STATE_FAILED']);
    expect([end.state, end.reason]).toEqual(['STATE_COMPLETED', 'STOPPED_BY_USER']);
    expect(await logText(t, 'pod-init-stop')).toBe('');
  });

  it('containers of a sandbox with an egress link share that namespace', async () => {
    await launchRunning(
      t,
      spec('pod-egress', {
        network: 'host',
        command: ['sh', '-c', 'for i in $(seq 100); do python3 -c "import urllib.request;print(urllib.request.urlopen(\'http://127.0.0.1:18082/\').status)" 2>/dev/null && break; sleep 0.1; done; sleep 600'],
        sidecars: [container('web', 'exec python3 -m http.server 18082 --bind 127.0.0.1 --directory /usr/share')],
      }),
    );
    await waitFor(async () => (await logText(t, 'pod-egress')).includes('200'), { timeoutMs: 20_000, what: 'the primary to reach its sidecar' });
    // Both see the same interfaces: the link's eth0 besides loopback.
    const primaryIfs = await t.backend.exec('pod-egress', { argv: ['cat', '/proc/net/dev'] });
    const sidecarIfs = await t.backend.exec('pod-egress', { argv: ['cat', '/proc/net/dev'], container: 'web' });
    const names = (text: string): string[] => text.split('\n').slice(2).map((l) => l.split(':')[0]?.trim() ?? '').filter(Boolean).sort();
    expect(names(primaryIfs.stdout.toString())).toEqual(['eth0', 'lo']);
    expect(names(sidecarIfs.stdout.toString())).toEqual(['eth0', 'lo']);
    await t.backend.stop('pod-egress', 0, 'STOPPED_BY_USER');
  });

  it('honours readOnly and subPath, and caps every volume at its size', async () => {
    const script = [
      'echo sub > /vol/inner/file',
      'touch /ro/x 2>/dev/null && echo ro-writable || echo ro-refused',
      'ls /ro/inner',
      'ls /sub',
      'head -c 3000000 /dev/zero > /mem/big 2>/dev/null && echo mem-fit || echo mem-full',
      'rm -f /mem/big; head -c 1000000 /dev/zero > /mem/small && echo small-fit',
    ].join('; ');
    await t.backend.launch(
      spec('pod-vols', {
        command: ['sh', '-c', script],
        volumes: [
          { name: 'v', medium: 'disk', sizeBytes: 4 * MiB },
          { name: 'm', medium: 'memory', sizeBytes: 2 * MiB },
        ],
        volumeMounts: [
          { volume: 'v', mountPath: '/vol', readOnly: false },
          { volume: 'v', mountPath: '/ro', readOnly: true },
          { volume: 'v', mountPath: '/sub', readOnly: true, subPath: 'inner' },
          { volume: 'm', mountPath: '/mem', readOnly: false },
        ],
      }),
    );
    await waitForState(t, 'pod-vols', ['STATE_COMPLETED', 'STATE_FAILED']);
    // /vol/inner exists because a mount names it as a subPath (made before the containers start).
    expect(await logText(t, 'pod-vols')).toBe('ro-refused\nfile\nfile\nmem-full\nsmall-fit\n');
  });

  it('refuses a mount of an unknown volume and a subPath that climbs out, naming the field', async () => {
    await t.backend.launch(
      spec('pod-bad-vol', {
        volumeMounts: [{ volume: 'ghost', mountPath: '/g', readOnly: false }],
        volumes: [{ name: 'real', medium: 'disk', sizeBytes: MiB }],
      }),
    );
    expectFailure(
      await waitForState(t, 'pod-bad-vol', ['STATE_FAILED']),
      'FAILED_TO_START',
      'volumeMounts[0].volume "ghost"',
    );
    await t.backend.launch(
      spec('pod-bad-sub', {
        volumeMounts: [{ volume: 'real', mountPath: '/g', readOnly: false, subPath: '../etc' }],
        volumes: [{ name: 'real', medium: 'disk', sizeBytes: MiB }],
      }),
    );
    expectFailure(
      await waitForState(t, 'pod-bad-sub', ['STATE_FAILED']),
      'FAILED_TO_START',
      'volumeMounts[0].subPath',
    );
    await t.backend.launch(
      spec('pod-bad-image', { sidecars: [container('side', 'true', { image: 'no/such' })] }),
    );
    expectFailure(
      await waitForState(t, 'pod-bad-image', ['STATE_FAILED']),
      'IMAGE_NOT_FOUND',
      'container "side"',
    );
  });

  it('a lone container answers to its own name as the exec container', async () => {
    await launchRunning(t, spec('solo', { primaryName: 'solo-main' }));
    const r = await t.backend.exec('solo', { argv: ['hostname'], container: 'solo-main' });
    expect(r.stdout.toString()).toBe('solo\n');
    await expect(t.backend.exec('solo', { argv: ['true'], container: 'main' })).rejects.toMatchObject({ violations: [{ field: 'container' }] });
    await t.backend.stop('solo', 0, 'STOPPED_BY_USER');
  });

  it('is RUNNING only once the startup probe passes', async () => {
    await t.backend.launch(
      spec('probe-ok', {
        command: ['sh', '-c', 'sleep 0.5; touch /tmp/ready; sleep 600'],
        startupProbe: {
          exec: ['test', '-e', '/tmp/ready'],
          periodSeconds: 0.1,
          timeoutSeconds: 1,
          failureThreshold: 100,
          initialDelaySeconds: 0,
        },
      }),
    );
    await waitForState(t, 'probe-ok', ['STATE_RUNNING', 'STATE_FAILED']);
    // By the time it is RUNNING the probe's condition holds.
    const r = await t.backend.exec('probe-ok', { argv: ['test', '-e', '/tmp/ready'] });
    expect(r.exitCode).toBe(0);
    await t.backend.stop('probe-ok', 0, 'STOPPED_BY_USER');
  });

  it('a probe that never passes fails the sandbox with a reason, and never reports RUNNING', async () => {
    await t.backend.launch(
      spec('probe-never', {
        command: ['sleep', '600'],
        startupProbe: {
          exec: ['sh', '-c', 'exit 4'],
          periodSeconds: 0.05,
          timeoutSeconds: 1,
          failureThreshold: 3,
          initialDelaySeconds: 0,
        },
      }),
    );
    const end = await waitForState(t, 'probe-never', ['STATE_FAILED', 'STATE_COMPLETED']);
    expectFailure(end, 'STARTUP_PROBE_FAILED', 'failed 3 times');
    expect(end.message).toContain('exited with code 4');
    expect(t.events.filter((e) => e.sandboxId === 'probe-never').map((e) => e.state)).not.toContain(
      'STATE_RUNNING',
    );
    // A probe that hangs is killed at its timeout and counted as a failure.
    await t.backend.launch(
      spec('probe-hangs', {
        command: ['sleep', '600'],
        startupProbe: {
          exec: ['sleep', '60'],
          periodSeconds: 0.05,
          timeoutSeconds: 0.2,
          failureThreshold: 2,
          initialDelaySeconds: 0,
        },
      }),
    );
    expectFailure(
      await waitForState(t, 'probe-hangs', ['STATE_FAILED', 'STATE_COMPLETED']),
      'STARTUP_PROBE_FAILED',
      'timed out after 200 ms',
    );
  });
});
