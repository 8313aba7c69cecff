import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { Namespace } from 'kubernetes-models/v1/Namespace';
import { Service } from 'kubernetes-models/v1/Service';
import { ServiceAccount } from 'kubernetes-models/v1/ServiceAccount';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { StatefulSet } from 'kubernetes-models/apps/v1/StatefulSet';
import { ClusterRole } from 'kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRole';
import { ClusterRoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRoleBinding';
import { INFRA_DIR, renderKustomization, type KObject } from '../src/kustomize';

const OVERLAYS = ['dev', 'staging', 'production'] as const;
const SCHEMAS: Record<string, new (o: never) => { validate(): void }> = {
  Namespace: Namespace,
  Service: Service,
  ServiceAccount: ServiceAccount,
  Deployment: Deployment,
  StatefulSet: StatefulSet,
  ClusterRole: ClusterRole,
  ClusterRoleBinding: ClusterRoleBinding,
};

/** Lists of named items (env, containers, ports) are sets to Kubernetes: compare them sorted by name. */
function canonical(v: unknown): unknown {
  if (Array.isArray(v)) {
    const items = v.map(canonical);
    const named = items.every((i) => typeof i === 'object' && i !== null && typeof (i as { name?: unknown }).name === 'string');
    return named ? [...items].sort((a, b) => String((a as { name: string }).name).localeCompare(String((b as { name: string }).name))) : items;
  }
  if (typeof v === 'object' && v !== null) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, canonical(x)]));
  return v;
}

const key = (o: KObject): string => `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`;
/** Paddock's own services; the dev overlay adds Postgres and NATS beside them. */
const PADDOCK_DEPLOYMENTS = ['paddock-control-plane', 'paddock-controller', 'paddock-gateway'];
const workloads = (objects: KObject[]): KObject[] => objects.filter((o) => o.kind === 'Deployment' || o.kind === 'StatefulSet');
type Pod = { spec: { template: { spec: { automountServiceAccountToken?: boolean; securityContext: Record<string, unknown>; containers: { image: string; securityContext: Record<string, unknown> }[] } } } };

describe('deployment manifests (infra/k8s)', () => {
  for (const overlay of OVERLAYS) {
    describe(`overlay ${overlay}`, () => {
      const objects = renderKustomization(join(INFRA_DIR, 'k8s', 'overlays', overlay));

      it('renders and every object validates against the Kubernetes schemas', () => {
        expect(objects.length).toBeGreaterThanOrEqual(8);
        for (const o of objects) {
          const Schema = SCHEMAS[o.kind];
          expect(Schema, `no schema for ${o.kind}`).toBeDefined();
          if (Schema) expect(() => new Schema(o as never).validate(), key(o)).not.toThrow();
        }
      });

      it('puts every namespaced object in the overlay namespace and pins image tags', () => {
        const ns = objects.find((o) => o.kind === 'Namespace')?.metadata.name;
        expect(ns).toBeDefined();
        for (const o of objects) {
          if (!['Namespace', 'ClusterRole', 'ClusterRoleBinding'].includes(o.kind)) expect(o.metadata.namespace, key(o)).toBe(ns);
        }
        for (const d of workloads(objects)) {
          // Paddock's images by name and tag; a third-party one (Postgres, NATS) by an explicit version.
          const image = /^paddock-(control-plane|controller|gateway)$/.test(d.metadata.name) ? /^paddock\/[a-z-]+:[\w.-]+$/ : /^[a-z0-9./-]+:\d[\w.-]*$/;
          for (const c of (d as unknown as Pod).spec.template.spec.containers) expect(c.image, key(d)).toMatch(image);
        }
      });

      it('runs every pod as non-root, no privilege escalation, all capabilities dropped, RuntimeDefault seccomp', () => {
        for (const d of workloads(objects) as unknown as Pod[]) {
          const pod = d.spec.template.spec;
          expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
          for (const c of pod.containers) {
            expect(c.securityContext).toMatchObject({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } });
          }
        }
      });

      it('gives the controller least privilege: secrets written (runner NATS credentials) but never read, no wildcards', () => {
        const role = objects.find((o) => o.kind === 'ClusterRole') as unknown as { rules: { resources: string[]; verbs: string[]; apiGroups: string[] }[] };
        for (const r of role.rules) {
          if (r.resources.includes('secrets')) expect([r.resources, r.verbs]).toEqual([['secrets'], ['create', 'patch']]);
          expect(r.resources).not.toContain('*');
          expect(r.verbs).not.toContain('*');
          expect(r.apiGroups).not.toContain('*');
        }
        const binding = objects.find((o) => o.kind === 'ClusterRoleBinding') as unknown as { subjects: { namespace: string }[] };
        expect(binding.subjects[0]?.namespace).toBe(objects.find((o) => o.kind === 'Namespace')?.metadata.name);
      });

      it('connects the gateway and the controller to Postgres with database roles of their own, never the control plane\'s', () => {
        type Env = { name: string; valueFrom?: { secretKeyRef?: { name: string; key: string } } };
        const databaseUrlOf = (name: string): Env | undefined =>
          (objects.find((o) => o.kind === 'Deployment' && o.metadata.name === name) as unknown as { spec: { template: { spec: { containers: { env?: Env[] }[] } } } }).spec.template.spec.containers[0]?.env?.find((e) => e.name === 'DATABASE_URL');
        expect(databaseUrlOf('paddock-gateway')?.valueFrom?.secretKeyRef).toEqual({ name: 'paddock-gateway-db', key: 'DATABASE_URL' });
        expect(databaseUrlOf('paddock-controller')?.valueFrom?.secretKeyRef).toEqual({ name: 'paddock-controller-db', key: 'DATABASE_URL' });
        expect(databaseUrlOf('paddock-control-plane')).toBeUndefined();
      });
    });
  }

  it('mounts each service’s NATS credentials from its own Secret, read-only, readable by the pod’s group only, by path', () => {
    type NatsPod = {
      metadata: { name: string };
      spec: { template: { spec: { securityContext: { fsGroup?: number; runAsGroup?: number }; volumes?: { name: string; secret?: { secretName: string; defaultMode?: number } }[]; containers: { env?: { name: string; value?: string }[]; volumeMounts?: { name: string; mountPath: string; readOnly?: boolean }[] }[] } } };
    };
    for (const overlay of OVERLAYS) {
      const deployments = renderKustomization(join(INFRA_DIR, 'k8s', 'overlays', overlay)).filter((o) => o.kind === 'Deployment' && PADDOCK_DEPLOYMENTS.includes(o.metadata.name)) as unknown as NatsPod[];
      expect(deployments.map((d) => d.metadata.name).sort()).toEqual(PADDOCK_DEPLOYMENTS);
      for (const d of deployments) {
        const pod = d.spec.template.spec;
        expect(pod.volumes).toContainEqual({ name: 'nats-creds', secret: { secretName: `${d.metadata.name}-nats`, defaultMode: 0o440 } });
        expect(pod.securityContext.fsGroup).toBe(pod.securityContext.runAsGroup);
        const c = pod.containers[0];
        expect(c?.volumeMounts).toContainEqual({ name: 'nats-creds', mountPath: '/var/run/secrets/paddock.dev/nats', readOnly: true });
        expect(c?.env).toContainEqual({ name: 'NATS_CREDS', value: '/var/run/secrets/paddock.dev/nats/nats.creds' });
      }
      const cp = deployments.find((d) => d.metadata.name === 'paddock-control-plane')?.spec.template.spec.containers[0]?.env ?? [];
      expect(cp).toEqual(expect.arrayContaining([
        { name: 'PADDOCK_NATS_RUNNER_SIGNING_KEY', value: '/var/run/secrets/paddock.dev/nats/runner-signing.nk' },
        { name: 'PADDOCK_NATS_CONTROLLER_SIGNING_KEY', value: '/var/run/secrets/paddock.dev/nats/controller-signing.nk' },
      ]));
    }
  });

  it('applies the production overlay: replicas and the gateway resources patch', () => {
    const objects = renderKustomization(join(INFRA_DIR, 'k8s', 'overlays', 'production'));
    const gw = objects.find((o) => o.metadata.name === 'paddock-gateway' && o.kind === 'Deployment') as unknown as { spec: { replicas: number; template: { spec: { containers: { resources: unknown; env: unknown[] }[] } } } };
    expect(gw.spec.replicas).toBe(3);
    const c = gw.spec.template.spec.containers[0];
    expect(c?.resources).toEqual({ requests: { cpu: '1', memory: '512Mi' }, limits: { cpu: '2', memory: '1Gi' } });
    expect(c?.env.length).toBeGreaterThan(0);
  });

  // The offline renderer must agree with the real kustomize wherever kubectl is installed.
  const kubectl = spawnSync('kubectl', ['version', '--client'], { encoding: 'utf8' }).status === 0;
  it(`agrees with \`kubectl kustomize\` for every overlay (${kubectl ? 'kubectl found' : 'kubectl absent: compared against committed expectations only'})`, () => {
    for (const overlay of OVERLAYS) {
      const ours = renderKustomization(join(INFRA_DIR, 'k8s', 'overlays', overlay));
      expect(new Set(ours.map(key)).size).toBe(ours.length);
      if (!kubectl) continue;
      const r = spawnSync('kubectl', ['kustomize', join(INFRA_DIR, 'k8s', 'overlays', overlay)], { encoding: 'utf8' });
      expect(r.status, r.stderr).toBe(0);
      const theirs = parseAllDocuments(r.stdout).map((d) => d.toJS() as KObject);
      const byKey = new Map(theirs.map((o) => [key(o), o]));
      expect([...byKey.keys()].sort()).toEqual(ours.map(key).sort());
      for (const o of ours) expect(canonical(o), key(o)).toEqual(canonical(byKey.get(key(o))));
    }
  });

  it('docker-compose.yml parses and builds every Paddock service from the repository Dockerfile', () => {
    const compose = parse(readFileSync(join(INFRA_DIR, 'docker-compose.yml'), 'utf8')) as { services: Record<string, { image?: string; build?: { dockerfile: string; args: { APP: string } } }> };
    expect(Object.keys(compose.services)).toEqual(expect.arrayContaining(['postgres', 'nats', 'control-plane', 'gateway', 'controller']));
    for (const [name, svc] of Object.entries(compose.services)) {
      if (svc.build) {
        expect(existsSync(join(INFRA_DIR, '..', svc.build.dockerfile)), name).toBe(true);
        expect(existsSync(join(INFRA_DIR, '..', 'apps', svc.build.args.APP)), name).toBe(true);
      } else {
        expect(svc.image, name).toBeTruthy();
      }
    }
    const dockerfile = readFileSync(join(INFRA_DIR, 'docker', 'Dockerfile'), 'utf8');
    expect(dockerfile).toMatch(/^USER 10001:10001$/m);
    expect(dockerfile.match(/^FROM /gm)?.length).toBe(2);
  });
});
