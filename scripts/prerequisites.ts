// What `pnpm start` needs on this machine, checked before it builds or starts anything.
//
// The core is pure: `startProblems(facts)` turns what `gatherStartFacts` read from the machine
// into one problem per missing prerequisite, each with the one command that fixes it. The local
// sandbox backend's own needs (root, cgroups, user namespaces, bubblewrap at the runner's path)
// come from the runner itself, so the two lists cannot drift.
import { spawnSync } from 'node:child_process';
import { accessSync, constants, readdirSync, readFileSync, statSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { delimiter, join } from 'node:path';
import {
  localBackendProblems,
  probeLocalBackend,
  type LocalBackendFacts,
  type LocalPrerequisiteProblem,
} from '../apps/runner/src/backend/local/prerequisites';

export type StartProblem = LocalPrerequisiteProblem;

/** Binaries `pnpm start` and the local backend run, looked up on PATH. */
export const PATH_TOOLS = ['bwrap', 'nats-server', 'ip', 'nft'] as const;
export type PathTool = (typeof PATH_TOOLS)[number];

export const MIN_NODE = { major: 20, minor: 19 } as const;

export type PostgresFacts =
  | { url: string; host: string; port: number; reachable: boolean; clusterVersions: string[] }
  | { url: string; invalid: string };

export type NatsFacts =
  /** `pnpm start` runs its own nats-server on a private port. */
  | { managed: true; port: number; portTaken: boolean; freePort: number | undefined }
  /** NATS_URL names a server to use instead. */
  | { managed: false; url: string; host: string; port: number; reachable: boolean }
  | { managed: false; url: string; invalid: string };

export interface StartFacts {
  nodeVersion: string;
  /** From `packageManager` in the root package.json, e.g. "12.4.2"; undefined when it names no pnpm. */
  pnpmWanted: string | undefined;
  /** `pnpm --version` of the pnpm on PATH; undefined when there is none. */
  pnpmFound: string | undefined;
  /** Where each tool is on PATH; absent when it is not. */
  onPath: Partial<Record<PathTool, string>>;
  postgres: PostgresFacts;
  nats: NatsFacts;
  localBackend: LocalBackendFacts;
}

const TOOL_PACKAGES: Record<PathTool, { prerequisite: string; why: string; fix: string }> = {
  bwrap: {
    prerequisite: 'bubblewrap',
    why: 'the local sandbox backend runs every sandbox in it',
    fix: 'apt-get install bubblewrap',
  },
  'nats-server': {
    prerequisite: 'nats-server',
    why: 'pnpm start runs its own, with authentication',
    fix: 'apt-get install nats-server',
  },
  ip: {
    prerequisite: 'iproute2',
    why: 'sandbox networking creates a network namespace and veth pair per sandbox',
    fix: 'apt-get install iproute2',
  },
  nft: {
    prerequisite: 'nftables',
    why: 'sandbox networking filters each sandbox’s traffic with nftables rules',
    fix: 'apt-get install nftables',
  },
};

function parseVersion(v: string): number[] {
  return v.split('.').map((p) => Number.parseInt(p, 10) || 0);
}

function olderThan(found: string, wanted: string): boolean {
  const [a, b] = [parseVersion(found), parseVersion(wanted)];
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const d = (a[i] ?? 0) - (b[i] ?? 0);
    if (d !== 0) return d < 0;
  }
  return false;
}

function nodeProblem(version: string): StartProblem[] {
  const [major = 0, minor = 0] = parseVersion(version);
  if (major > MIN_NODE.major || (major === MIN_NODE.major && minor >= MIN_NODE.minor)) return [];
  return [
    {
      prerequisite: 'Node.js',
      problem: `Node ${version} is too old: Paddock needs Node ${MIN_NODE.major}.${MIN_NODE.minor} or later`,
      fix: 'curl -fsSL https://deb.nodesource.com/setup_20.x | bash - && apt-get install -y nodejs',
    },
  ];
}

function pnpmProblem(wanted: string | undefined, found: string | undefined): StartProblem[] {
  if (!wanted) return [];
  const fix = `npm i -g pnpm@${wanted}`;
  if (!found)
    {return [
      {
        prerequisite: 'pnpm',
        problem: `pnpm is not on PATH (this repository pins pnpm@${wanted} in packageManager)`,
        fix,
      },
    ];}
  // Same major (one lockfile format) and not older than the pin: a newer patch or minor is fine.
  if (parseVersion(found)[0] !== parseVersion(wanted)[0] || olderThan(found, wanted)) {
    return [
      {
        prerequisite: 'pnpm',
        problem: `pnpm ${found} is on PATH; this repository pins pnpm@${wanted} (packageManager)`,
        fix,
      },
    ];
  }
  return [];
}

function postgresProblem(pg: PostgresFacts): StartProblem[] {
  if ('invalid' in pg)
    {return [
      {
        prerequisite: 'Postgres',
        problem: `DATABASE_URL=${pg.url} is not a URL (${pg.invalid})`,
        fix: 'export DATABASE_URL=postgres://postgres@127.0.0.1:5432/paddock',
      },
    ];}
  if (pg.reachable) return [];
  const [version] = pg.clusterVersions;
  const start = version
    ? `pg_ctlcluster ${version} main start`
    : 'apt-get install postgresql && pg_ctlcluster $(ls /etc/postgresql) main start';
  return [
    {
      prerequisite: 'Postgres',
      problem: `Postgres is not reachable at ${pg.host}:${pg.port} (DATABASE_URL=${pg.url})`,
      fix: `${start} (or set DATABASE_URL to a running server)`,
    },
  ];
}

function natsProblem(nats: NatsFacts, natsServer: string | undefined): StartProblem[] {
  if (!nats.managed) {
    if ('invalid' in nats)
      {return [
        {
          prerequisite: 'NATS',
          problem: `NATS_URL=${nats.url} is not a URL (${nats.invalid})`,
          fix: 'unset NATS_URL (pnpm start then runs its own nats-server)',
        },
      ];}
    if (nats.reachable) return [];
    return [
      {
        prerequisite: 'NATS',
        problem: `NATS is not reachable at ${nats.host}:${nats.port} (NATS_URL=${nats.url})`,
        fix: `nats-server -a ${nats.host} -p ${nats.port} -js & (or unset NATS_URL: pnpm start then runs its own)`,
      },
    ];
  }
  if (!natsServer || !nats.portTaken) return [];
  return [
    {
      prerequisite: 'NATS port',
      problem: `port ${nats.port} (PADDOCK_NATS_PORT) is taken; pnpm start's own nats-server listens there`,
      fix: `PADDOCK_NATS_PORT=${nats.freePort ?? nats.port + 1} pnpm start`,
    },
  ];
}

function toolProblems(f: StartFacts): StartProblem[] {
  // A server named by NATS_URL needs no local nats-server.
  const needed = PATH_TOOLS.filter((t) => t !== 'nats-server' || f.nats.managed);
  return needed
    .filter((t) => !f.onPath[t])
    .map((t) => {
      const { prerequisite, why, fix } = TOOL_PACKAGES[t];
      return { prerequisite, problem: `${t} is not on PATH (${why})`, fix };
    });
}

/** Every missing prerequisite, at most one per prerequisite, in the order a user fixes them. */
export function startProblems(f: StartFacts): StartProblem[] {
  const all = [
    ...nodeProblem(f.nodeVersion),
    ...pnpmProblem(f.pnpmWanted, f.pnpmFound),
    ...toolProblems(f),
    ...localBackendProblems(f.localBackend),
    ...postgresProblem(f.postgres),
    ...natsProblem(f.nats, f.onPath['nats-server']),
  ];
  // bubblewrap missing from PATH and from the runner's path is one problem, not two.
  const seen = new Set<string>();
  return all.filter((p) => !seen.has(p.prerequisite) && seen.add(p.prerequisite));
}

/** One line: the prerequisite, what is wrong, and the command that fixes it. */
export function formatProblem(p: StartProblem): string {
  return `error: ${p.prerequisite}: ${p.problem}. Fix: ${p.fix}`;
}

// ---- reading the machine ----

/** Like `command -v`: the first executable file named `name` in PATH. */
export function findOnPath(name: string, path = process.env.PATH ?? ''): string | undefined {
  for (const dir of path.split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, name);
    try {
      if (!statSync(candidate).isFile()) continue;
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      /* not here */
    }
  }
  return undefined;
}

export function tcpReachable(host: string, port: number, timeoutMs = 1500): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(port, host);
    const t = setTimeout(() => {
      s.destroy();
      resolve(false);
    }, timeoutMs);
    s.once('connect', () => {
      clearTimeout(t);
      s.destroy();
      resolve(true);
    });
    s.once('error', () => {
      clearTimeout(t);
      resolve(false);
    });
  });
}

function freeLoopbackPort(): Promise<number | undefined> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', () => resolve(undefined));
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => resolve(typeof addr === 'object' && addr ? addr.port : undefined));
    });
  });
}

function listDir(dir: string): string[] {
  try {
    return readdirSync(dir).sort();
  } catch {
    return [];
  }
}

async function postgresFacts(url: string): Promise<PostgresFacts> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch (e) {
    return { url, invalid: e instanceof Error ? e.message : String(e) };
  }
  const host = parsed.hostname || '127.0.0.1';
  const port = Number(parsed.port || 5432);
  return {
    url,
    host,
    port,
    reachable: await tcpReachable(host, port),
    clusterVersions: listDir('/etc/postgresql'),
  };
}

async function natsFacts(natsUrl: string | undefined, natsPort: number): Promise<NatsFacts> {
  if (natsUrl === undefined) {
    const portTaken = await tcpReachable('127.0.0.1', natsPort);
    return {
      managed: true,
      port: natsPort,
      portTaken,
      freePort: portTaken ? await freeLoopbackPort() : undefined,
    };
  }
  let parsed: URL;
  try {
    parsed = new URL(natsUrl);
  } catch (e) {
    return { managed: false, url: natsUrl, invalid: e instanceof Error ? e.message : String(e) };
  }
  const host = parsed.hostname || '127.0.0.1';
  const port = Number(parsed.port || 4222);
  return { managed: false, url: natsUrl, host, port, reachable: await tcpReachable(host, port) };
}

export interface StartSettings {
  repoRoot: string;
  databaseUrl: string;
  /** Undefined: `pnpm start` runs its own nats-server on `natsPort`. */
  natsUrl: string | undefined;
  natsPort: number;
  path?: string;
}

/** Reads what `startProblems` needs from this machine; it runs nothing that outlives it. */
export async function gatherStartFacts(s: StartSettings): Promise<StartFacts> {
  const path = s.path ?? process.env.PATH ?? '';
  const manifest = JSON.parse(readFileSync(join(s.repoRoot, 'package.json'), 'utf8')) as {
    packageManager?: string;
  };
  const pnpmWanted = /^pnpm@(\d[^+\s]*)/.exec(manifest.packageManager ?? '')?.[1];
  const pnpm = findOnPath('pnpm', path);
  const version = pnpm
    ? spawnSync(pnpm, ['--version'], {
        encoding: 'utf8',
        timeout: 15_000,
        env: { ...process.env, PATH: path },
      })
    : undefined;
  const onPath: Partial<Record<PathTool, string>> = {};
  for (const tool of PATH_TOOLS) {
    const found = findOnPath(tool, path);
    if (found) onPath[tool] = found;
  }
  const [postgres, nats] = await Promise.all([
    postgresFacts(s.databaseUrl),
    natsFacts(s.natsUrl, s.natsPort),
  ]);
  return {
    nodeVersion: process.versions.node,
    pnpmWanted,
    pnpmFound: version?.status === 0 ? version.stdout.trim() : undefined,
    onPath,
    postgres,
    nats,
    localBackend: probeLocalBackend(),
  };
}
