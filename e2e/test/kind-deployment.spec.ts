import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, credsAuthenticator } from '@nats-io/transport-node';
import { openInstallationDir } from '@paddock/nats';
import { REPO_ROOT, freePort, waitFor } from '@paddock/testing';
import { parse } from 'yaml';
import { DOCKERFILE, IMAGE_APPS, imagePlan, seededRunnerReleases } from '../../infra/docker/images';
import {
  NATS_MOUNT,
  bootstrapSecrets,
  natsMaterial,
  platformSecrets,
  type DevSecret,
} from '../../infra/kind/dev-secrets';
import { findOnPath, tcpReachable } from '../../scripts/prerequisites';
import { INFRA_DIR, renderKustomization, type KObject } from '../src/kustomize';
import { pathWithout } from '../src/path-without';

/**
 * Offline checks that following the kind instructions can produce a working platform: what kind
 * maps reaches a Service, the dev overlay holds every workload and finds every Secret and key it
 * reads, and every image anything names is one `pnpm images` builds. What needs a Docker daemon
 * and a cluster (the images building, the pods starting) is not verified here.
 */
interface Container {
  name: string;
  image: string;
  ports?: { name?: string; containerPort: number }[];
  env?: {
    name: string;
    value?: string;
    valueFrom?: { secretKeyRef?: { name: string; key: string } };
  }[];
  envFrom?: { secretRef?: { name: string } }[];
  volumeMounts?: { name: string; mountPath: string }[];
  command?: string[];
  args?: string[];
}
interface Workload extends KObject {
  spec: {
    template: {
      metadata: { labels: Record<string, string> };
      spec: {
        containers: Container[];
        serviceAccountName?: string;
        volumes?: { name: string; secret?: { secretName: string } }[];
      };
    };
  };
}
interface ServiceObject extends KObject {
  spec: {
    type?: string;
    selector: Record<string, string>;
    ports: { name: string; port: number; targetPort: string | number; nodePort?: number }[];
  };
}

const dev = renderKustomization(join(INFRA_DIR, 'k8s', 'overlays', 'dev'));
const workloads = dev.filter(
  (o) => o.kind === 'Deployment' || o.kind === 'StatefulSet',
) as Workload[];
const services = dev.filter((o) => o.kind === 'Service') as ServiceObject[];
const podsOf = (svc: ServiceObject): Workload[] =>
  workloads.filter((w) =>
    Object.entries(svc.spec.selector).every(([k, v]) => w.spec.template.metadata.labels[k] === v),
  );
/** The Service an in-cluster URL names (`name`, `name.namespace`, or `name.namespace.svc.cluster.local`), and its port. */
function serviceOf(url: string): { svc: ServiceObject | undefined; port: number } {
  const u = new URL(url);
  const [name, namespace] = u.hostname.split('.');
  const svc = services.find(
    (s) =>
      s.metadata.name === name && (namespace === undefined || s.metadata.namespace === namespace),
  );
  return { svc, port: Number(u.port) };
}

/** Every Secret the dev overlay expects, as infra/kind/up.mjs creates them (values made up here, NATS material real). */
async function devSecrets(dir: string): Promise<DevSecret[]> {
  const nats = await natsMaterial(openInstallationDir, dir);
  return [
    ...bootstrapSecrets({
      nats,
      postgresPassword: 'pw/with:reserved@chars',
      adminToken: 'pdk_test',
    }),
    ...platformSecrets({
      gatewayDatabaseUrl: 'postgres://gw@paddock-postgres:5432/paddock',
      controllerDatabaseUrl: 'postgres://ctl@paddock-postgres:5432/paddock',
      controllerCreds: 'creds',
    }),
  ];
}

describe('kind deployment (infra/kind, the dev overlay, the images)', () => {
  let scratch: string;
  beforeAll(() => {
    scratch = mkdtempSync(join(tmpdir(), 'paddock-kind-'));
  });
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it('every host port kind maps lands on a NodePort Service of the dev overlay, at the same port as on the host', () => {
    const cluster = parse(readFileSync(join(INFRA_DIR, 'kind', 'cluster.yaml'), 'utf8')) as {
      nodes: { extraPortMappings?: { containerPort: number; hostPort: number }[] }[];
    };
    const mappings = cluster.nodes.flatMap((n) => n.extraPortMappings ?? []);
    expect(mappings.length).toBeGreaterThan(0);
    const reached = mappings.map(({ containerPort, hostPort }) => {
      const svc = services.find(
        (s) => s.spec.type === 'NodePort' && s.spec.ports.some((p) => p.nodePort === containerPort),
      );
      expect(svc, `no NodePort Service on node port ${containerPort}`).toBeDefined();
      const port = svc?.spec.ports.find((p) => p.nodePort === containerPort);
      // The host port is the Service's own port, so the CLI's default URLs work unchanged.
      expect(port?.port).toBe(hostPort);
      // And it reaches a container port of a pod the Service selects.
      const containerPorts = podsOf(svc as ServiceObject).flatMap((w) =>
        w.spec.template.spec.containers.flatMap((c) => c.ports ?? []),
      );
      expect(
        containerPorts.some(
          (p) => p.name === port?.targetPort || p.containerPort === port?.targetPort,
        ),
        `${svc?.metadata.name} targets nothing`,
      ).toBe(true);
      return `${hostPort}->${svc?.metadata.name}`;
    });
    expect(reached.sort()).toEqual(['8080->paddock-control-plane', '8081->paddock-gateway']);
  });

  it('the dev overlay holds the whole platform: control plane, gateway, controller, Postgres, NATS, each behind its Service', () => {
    expect(workloads.map((w) => `${w.kind}/${w.metadata.name}`).sort()).toEqual([
      'Deployment/paddock-control-plane',
      'Deployment/paddock-controller',
      'Deployment/paddock-gateway',
      'Deployment/paddock-nats',
      'StatefulSet/paddock-postgres',
    ]);
    for (const name of [
      'paddock-control-plane',
      'paddock-gateway',
      'paddock-postgres',
      'paddock-nats',
    ]) {
      const svc = services.find((s) => s.metadata.name === name);
      expect(svc && podsOf(svc).map((w) => w.metadata.name), name).toEqual([name]);
    }
    for (const w of workloads) {
      const sa = w.spec.template.spec.serviceAccountName;
      if (sa) {
        expect(
          dev.some((o) => o.kind === 'ServiceAccount' && o.metadata.name === sa),
          `${w.metadata.name}: ServiceAccount ${sa}`,
        ).toBe(true);
      }
    }
  });

  it('every Secret and key the dev overlay reads is one infra/kind/up.mjs creates, and the URLs in them name the overlay’s Services', async () => {
    const made = await devSecrets(join(scratch, 'nats'));
    const secret = (name: string): DevSecret | undefined => made.find((s) => s.name === name);
    const refs: string[] = [];
    const mountedFiles: string[] = [];
    for (const w of workloads) {
      const pod = w.spec.template.spec;
      for (const c of pod.containers) {
        for (const e of c.envFrom ?? []) {
          if (!e.secretRef) continue;
          refs.push(e.secretRef.name);
          expect(
            secret(e.secretRef.name),
            `${w.metadata.name}: envFrom ${e.secretRef.name}`,
          ).toBeDefined();
        }
        for (const e of c.env ?? []) {
          const ref = e.valueFrom?.secretKeyRef;
          if (ref) {
            expect(
              secret(ref.name)?.data[ref.key],
              `${w.metadata.name}: ${e.name} from ${ref.name}/${ref.key}`,
            ).toBeTruthy();
          }
        }
        // A file path under a mounted Secret (in the environment or on the command line) is one of that Secret's keys.
        const paths = [
          ...(c.env ?? []).map((e) => e.value ?? ''),
          ...(c.command ?? []),
          ...(c.args ?? []),
        ];
        for (const path of paths) {
          const mount = c.volumeMounts?.find((m) => path.startsWith(`${m.mountPath}/`));
          const volume = pod.volumes?.find((v) => v.name === mount?.name)?.secret;
          if (!mount || !volume) continue;
          mountedFiles.push(path);
          const file = path.slice(mount.mountPath.length + 1);
          expect(
            secret(volume.secretName)?.data[file],
            `${w.metadata.name}: ${path} in ${volume.secretName}`,
          ).toBeTruthy();
        }
      }
      for (const v of pod.volumes ?? []) {
        if (v.secret) {
          expect(
            secret(v.secret.secretName),
            `${w.metadata.name}: volume ${v.secret.secretName}`,
          ).toBeDefined();
        }
      }
    }
    expect(mountedFiles).toEqual(
      expect.arrayContaining([
        '/etc/nats/server.conf',
        `${NATS_MOUNT}/nats.creds`,
        `${NATS_MOUNT}/runner-signing.nk`,
      ]),
    );
    // paddock-env is read whole (envFrom): it must carry what the services need and no more.
    expect(new Set(refs)).toEqual(new Set(['paddock-env']));
    const env = secret('paddock-env')?.data ?? {};
    expect(Object.keys(env).sort()).toEqual([
      'DATABASE_URL',
      'NATS_URL',
      'PADDOCK_BOOTSTRAP_TOKEN',
    ]);
    for (const url of [
      env.DATABASE_URL,
      env.NATS_URL,
      ...made.filter((s) => s.name.endsWith('-db')).map((s) => s.data.DATABASE_URL),
    ]) {
      const { svc, port } = serviceOf(url as string);
      expect(
        svc?.spec.ports.map((p) => p.port),
        url,
      ).toContain(port);
    }
    const cpUrl = workloads
      .find((w) => w.metadata.name === 'paddock-controller')
      ?.spec.template.spec.containers[0]?.env?.find(
        (e) => e.name === 'PADDOCK_CONTROL_PLANE_URL',
      )?.value;
    expect(serviceOf(cpUrl as string).svc?.metadata.name).toBe('paddock-control-plane');
    // The password survives the URL (reserved characters are escaped).
    expect(decodeURIComponent(new URL(env.DATABASE_URL as string).password)).toBe(
      'pw/with:reserved@chars',
    );
  });

  it('the NATS Secrets work: nats-server runs on paddock-nats-server’s config, takes the gateway’s and the control plane’s users, refuses anonymous clients', async () => {
    const port = await freePort();
    const nats = await natsMaterial(openInstallationDir, join(scratch, 'nats-live'), {
      host: '127.0.0.1',
      port,
    });
    const secrets = bootstrapSecrets({ nats, postgresPassword: 'x', adminToken: 'pdk_x' });
    const conf = join(scratch, 'server.conf');
    writeFileSync(
      conf,
      secrets.find((s) => s.name === 'paddock-nats-server')?.data['server.conf'] ?? '',
    );
    const bin = findOnPath('nats-server');
    expect(bin, 'nats-server on PATH').toBeDefined();
    const server = spawn(bin as string, ['-c', conf], { stdio: 'ignore' });
    try {
      await waitFor(() => tcpReachable('127.0.0.1', port, 300), {
        timeoutMs: 15_000,
        what: 'nats-server listening',
      });
      for (const name of ['paddock-gateway-nats', 'paddock-control-plane-nats']) {
        const creds = secrets.find((s) => s.name === name)?.data['nats.creds'] ?? '';
        const nc = await connect({
          servers: `nats://127.0.0.1:${port}`,
          authenticator: credsAuthenticator(new TextEncoder().encode(creds)),
          reconnect: false,
        });
        await nc.flush();
        await nc.close();
      }
      await expect(
        connect({ servers: `nats://127.0.0.1:${port}`, reconnect: false }),
      ).rejects.toThrow(/Authorization Violation/);
    } finally {
      server.kill('SIGTERM');
      await waitFor(() => server.exitCode !== null || server.signalCode !== null, {
        timeoutMs: 10_000,
        what: 'nats-server stopped',
      });
    }
  });

  it('every image an overlay or a control-plane release channel names is built by `pnpm images`, from a Dockerfile and an app that exist', () => {
    const plan = imagePlan(REPO_ROOT);
    const built = new Set(plan.flatMap((b) => b.tags.map((t) => `${b.image}:${t}`)));
    const named = new Set<string>();
    for (const overlay of readdirSync(join(INFRA_DIR, 'k8s', 'overlays'))) {
      for (const o of renderKustomization(join(INFRA_DIR, 'k8s', 'overlays', overlay))) {
        for (const c of (o as Workload).spec?.template?.spec?.containers ?? []) {
          if (c.image.startsWith('paddock/')) named.add(c.image);
        }
      }
    }
    const releases = seededRunnerReleases(REPO_ROOT);
    expect(releases.map((r) => r.image)).toEqual(
      expect.arrayContaining([
        'paddock/runner:0.1.0',
        'paddock/runner:0.2.0',
        'paddock/runner:0.3.0',
      ]),
    );
    for (const r of releases) named.add(r.image);
    expect([...named].filter((i) => !built.has(i))).toEqual([]);
    expect(plan.map((b) => b.app)).toEqual([...IMAGE_APPS]);
    for (const b of plan) {
      expect(b.dockerfile).toBe(DOCKERFILE);
      expect(existsSync(join(REPO_ROOT, b.dockerfile))).toBe(true);
      expect(existsSync(join(REPO_ROOT, 'apps', b.app, 'src', 'main.ts')), b.app).toBe(true);
    }
    const rootScripts = (
      JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as {
        scripts: Record<string, string>;
      }
    ).scripts;
    expect(rootScripts.images).toBe('node infra/docker/build-images.mjs');
    // The dry run prints one docker build per image, every tag on it.
    const dry = spawnSync('pnpm', ['images', '--dry-run'], { cwd: REPO_ROOT, encoding: 'utf8' });
    expect(dry.status, dry.stderr).toBe(0);
    const lines = dry.stdout.split('\n').filter((l) => l.startsWith('docker build'));
    expect(lines).toHaveLength(IMAGE_APPS.length);
    for (const image of built) expect(dry.stdout).toContain(`-t ${image} `);
  });

  it('the Dockerfile’s deploy step works for every image: `pnpm deploy --prod` yields a folder that runs on its own', () => {
    const dockerfile = readFileSync(join(REPO_ROOT, DOCKERFILE), 'utf8');
    expect(dockerfile).toContain('pnpm --filter @paddock/${APP} deploy --prod /out');
    for (const app of IMAGE_APPS) {
      const out = join(scratch, `deploy-${app}`);
      const r = spawnSync('pnpm', ['--filter', `@paddock/${app}`, 'deploy', '--prod', out], {
        cwd: REPO_ROOT,
        encoding: 'utf8',
        timeout: 300_000,
      });
      expect(r.status, `${app}: ${r.stderr}`).toBe(0);
      expect(existsSync(join(out, 'dist', 'main.js')), app).toBe(true);
      // Its whole module graph loads from the folder alone (workspace packages and production
      // dependencies inside it), as in the image where nothing else exists.
      const load = spawnSync(
        process.execPath,
        ['-e', `require(${JSON.stringify(join(out, 'dist', 'index.js'))})`],
        { cwd: out, encoding: 'utf8', env: { PATH: process.env.PATH ?? '' } },
      );
      expect(load.status, `${app}: ${load.stderr}`).toBe(0);
    }
  });

  it('`pnpm images` without a Docker daemon, or without docker, says so in one line and exits 1', () => {
    const images = (path?: string) =>
      spawnSync(process.execPath, [join(REPO_ROOT, 'infra/docker/build-images.mjs')], {
        cwd: REPO_ROOT,
        encoding: 'utf8',
        env: { ...process.env, ...(path ? { PATH: path } : {}) },
      });
    const docker = findOnPath('docker');
    const daemon = docker ? spawnSync(docker, ['info'], { stdio: 'ignore' }).status === 0 : false;
    if (docker && !daemon) {
      const r = images();
      expect(r.status).toBe(1);
      expect(r.stderr.trimEnd().split('\n')).toEqual([
        expect.stringMatching(
          /^error: docker is installed \(.+\) but no Docker daemon answers \(.+\)\. Fix: start the daemon/,
        ) as string,
      ]);
    }
    const r = images(pathWithout('docker', scratch));
    expect(r.status).toBe(1);
    expect(r.stderr.trimEnd().split('\n')).toEqual([
      expect.stringMatching(
        /^error: docker is not on PATH: pnpm images builds the images with Docker\. Fix: /,
      ) as string,
    ]);
  });
});
