import type { LocalBackendFacts } from '../../apps/runner/src/backend/local/prerequisites';
import {
  findOnPath,
  formatProblem,
  startProblems,
  type StartFacts,
} from '../../scripts/prerequisites';

/** `pnpm start`'s checks, facts in and lines out: every message names its prerequisite and its fix. */
const localBackend: LocalBackendFacts = {
  platform: 'linux',
  uid: 0,
  bwrapPath: '/usr/bin/bwrap',
  bwrapExecutable: true,
  pythonPath: '/usr/bin/python3',
  pythonExecutable: true,
  cgroupRoot: '/sys/fs/cgroup',
  cgroupMode: 'v2',
  missingV2Controllers: [],
  missingV1Controllers: [],
  maxUserNamespaces: 1000,
  unprivilegedUsernsClone: undefined,
  apparmorRestrictsUserns: undefined,
  sandboxUid: 65534,
  sandboxProbe: { ok: true, detail: 'exit 0' },
};
const healthy: StartFacts = {
  nodeVersion: '20.19.0',
  pnpmWanted: '12.4.2',
  pnpmFound: '12.4.2',
  onPath: {
    bwrap: '/usr/bin/bwrap',
    'nats-server': '/usr/sbin/nats-server',
    ip: '/usr/sbin/ip',
    nft: '/usr/sbin/nft',
  },
  postgres: {
    url: 'postgres://postgres@127.0.0.1:5432/paddock',
    host: '127.0.0.1',
    port: 5432,
    reachable: true,
    clusterVersions: ['15'],
  },
  nats: { managed: true, port: 4223, portTaken: false, freePort: undefined },
  localBackend,
};
const lines = (facts: Partial<StartFacts>): string[] =>
  startProblems({ ...healthy, ...facts }).map(formatProblem);

describe('startProblems', () => {
  it('finds nothing on a machine that has everything', () => {
    expect(lines({})).toEqual([]);
  });

  it('Node older than 20.19', () => {
    expect(lines({ nodeVersion: '20.11.1' })).toEqual([
      'error: Node.js: Node 20.11.1 is too old: Paddock needs Node 20.19 or later. Fix: curl -fsSL https://deb.nodesource.com/setup_20.x | bash - && apt-get install -y nodejs',
    ]);
    expect(lines({ nodeVersion: '22.1.0' })).toEqual([]);
  });

  it('pnpm: missing, an older or another major version; a newer patch is fine', () => {
    expect(lines({ pnpmFound: undefined })).toEqual([
      'error: pnpm: pnpm is not on PATH (this repository pins pnpm@12.4.2 in packageManager). Fix: npm i -g pnpm@12.4.2',
    ]);
    expect(lines({ pnpmFound: '12.4.1' })).toEqual([
      'error: pnpm: pnpm 12.4.1 is on PATH; this repository pins pnpm@12.4.2 (packageManager). Fix: npm i -g pnpm@12.4.2',
    ]);
    expect(lines({ pnpmFound: '13.0.0' })).toEqual([
      'error: pnpm: pnpm 13.0.0 is on PATH; this repository pins pnpm@12.4.2 (packageManager). Fix: npm i -g pnpm@12.4.2',
    ]);
    expect(lines({ pnpmFound: '12.5.0' })).toEqual([]);
  });

  it('each tool missing from PATH, with its Debian package', () => {
    expect(lines({ onPath: { ...healthy.onPath, bwrap: undefined } })).toEqual([
      'error: bubblewrap: bwrap is not on PATH (the local sandbox backend runs every sandbox in it). Fix: apt-get install bubblewrap',
    ]);
    expect(lines({ onPath: { ...healthy.onPath, 'nats-server': undefined } })).toEqual([
      'error: nats-server: nats-server is not on PATH (pnpm start runs its own, with authentication). Fix: apt-get install nats-server',
    ]);
    expect(lines({ onPath: { ...healthy.onPath, ip: undefined } })).toEqual([
      'error: iproute2: ip is not on PATH (sandbox networking creates a network namespace and veth pair per sandbox). Fix: apt-get install iproute2',
    ]);
    expect(lines({ onPath: { ...healthy.onPath, nft: undefined } })).toEqual([
      'error: nftables: nft is not on PATH (sandbox networking filters each sandbox’s traffic with nftables rules). Fix: apt-get install nftables',
    ]);
  });

  it('bubblewrap missing both from PATH and from the runner’s path is one line', () => {
    expect(
      lines({
        onPath: { ...healthy.onPath, bwrap: undefined },
        localBackend: { ...localBackend, bwrapExecutable: false },
      }),
    ).toHaveLength(1);
  });

  it('the local backend’s own checks come through with their fixes (root, cgroups, user namespaces)', () => {
    expect(lines({ localBackend: { ...localBackend, uid: 1000 } })).toEqual([
      'error: root: the local backend must run as root (it creates cgroups and mounts each sandbox’s size-capped tmpfs). Fix: sudo -E pnpm start',
    ]);
    expect(
      lines({
        localBackend: {
          ...localBackend,
          cgroupMode: undefined,
          missingV1Controllers: ['pids', 'memory', 'cpu'],
        },
      }),
    ).toEqual([
      'error: cgroups: no usable cgroups under /sys/fs/cgroup: need cgroup v2 (cgroup.controllers) or v1 with cpu, memory and pids mounted. Fix: mount -t cgroup2 none /sys/fs/cgroup',
    ]);
    expect(lines({ localBackend: { ...localBackend, missingV2Controllers: ['memory'] } })).toEqual([
      'error: cgroup controllers: cgroup v2 at /sys/fs/cgroup does not offer memory (sandboxes are capped with cpu, memory and pids). Fix: on the host: echo "+memory" > /sys/fs/cgroup/cgroup.subtree_control, and run this container with --cgroupns=host',
    ]);
    expect(lines({ localBackend: { ...localBackend, maxUserNamespaces: 0 } })).toEqual([
      'error: user namespaces: user namespaces are disabled (user.max_user_namespaces = 0). Fix: sysctl -w user.max_user_namespaces=15000',
    ]);
  });

  it('Postgres unreachable: starts the installed cluster, or installs one', () => {
    const down = { ...healthy.postgres, reachable: false } as const;
    expect(lines({ postgres: down })).toEqual([
      'error: Postgres: Postgres is not reachable at 127.0.0.1:5432 (DATABASE_URL=postgres://postgres@127.0.0.1:5432/paddock). Fix: pg_ctlcluster 15 main start (or set DATABASE_URL to a running server)',
    ]);
    expect(lines({ postgres: { ...down, clusterVersions: [] } })[0]).toMatch(
      /Fix: apt-get install postgresql && pg_ctlcluster \$\(ls \/etc\/postgresql\) main start/,
    );
    expect(lines({ postgres: { url: 'nope', invalid: 'Invalid URL' } })).toEqual([
      'error: Postgres: DATABASE_URL=nope is not a URL (Invalid URL). Fix: export DATABASE_URL=postgres://postgres@127.0.0.1:5432/paddock',
    ]);
  });

  it('NATS: a NATS_URL server down, a taken private port; NATS_URL needs no local nats-server', () => {
    const external = {
      managed: false,
      url: 'nats://127.0.0.1:4222',
      host: '127.0.0.1',
      port: 4222,
      reachable: false,
    } as const;
    expect(
      lines({ nats: external, onPath: { ...healthy.onPath, 'nats-server': undefined } }),
    ).toEqual([
      'error: NATS: NATS is not reachable at 127.0.0.1:4222 (NATS_URL=nats://127.0.0.1:4222). Fix: nats-server -a 127.0.0.1 -p 4222 -js & (or unset NATS_URL: pnpm start then runs its own)',
    ]);
    expect(
      lines({
        nats: { ...external, reachable: true },
        onPath: { ...healthy.onPath, 'nats-server': undefined },
      }),
    ).toEqual([]);
    expect(
      lines({ nats: { managed: true, port: 4223, portTaken: true, freePort: 40001 } }),
    ).toEqual([
      "error: NATS port: port 4223 (PADDOCK_NATS_PORT) is taken; pnpm start's own nats-server listens there. Fix: PADDOCK_NATS_PORT=40001 pnpm start",
    ]);
  });

  it('several missing prerequisites: one line each', () => {
    const problems = startProblems({
      ...healthy,
      pnpmFound: undefined,
      postgres: { ...healthy.postgres, reachable: false },
    });
    expect(problems.map((p) => p.prerequisite)).toEqual(['pnpm', 'Postgres']);
  });
});

describe('findOnPath', () => {
  it('finds executables as `command -v` does, and nothing in an empty PATH', () => {
    expect(findOnPath('sh', '/nonexistent:/bin:/usr/bin')).toMatch(/\/sh$/);
    expect(findOnPath('sh', '')).toBeUndefined();
  });
});
