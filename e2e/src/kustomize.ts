import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { parseAllDocuments, parse } from 'yaml';

/**
 * A small, offline kustomize for the features `infra/k8s` uses, so the manifests render and
 * validate on machines without kubectl or a cluster: resources (files and directories),
 * namespace, labels (metadata only), images, replicas and strategic-merge patches (lists of named
 * items merged by `name`). Where kubectl exists, a test compares this output with
 * `kubectl kustomize` to keep the two honest.
 */
export interface KObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; [k: string]: unknown };
  [k: string]: unknown;
}

interface Kustomization {
  resources?: string[];
  namespace?: string;
  labels?: { pairs: Record<string, string>; includeSelectors?: boolean }[];
  images?: { name: string; newName?: string; newTag?: string }[];
  replicas?: { name: string; count: number }[];
  patches?: { path: string }[];
}

const CLUSTER_SCOPED = new Set(['Namespace', 'ClusterRole', 'ClusterRoleBinding', 'RuntimeClass', 'Node', 'PriorityClass']);

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
const isObj = (v: unknown): v is Record<string, Json> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Strategic merge for the shapes used here: objects merge, lists of named items merge by name. */
export function strategicMerge(base: Json, patch: Json): Json {
  if (isObj(base) && isObj(patch)) {
    const out: Record<string, Json> = { ...base };
    for (const [k, v] of Object.entries(patch)) out[k] = k in base ? strategicMerge(base[k] as Json, v) : v;
    return out;
  }
  if (Array.isArray(base) && Array.isArray(patch) && patch.every((p) => isObj(p) && typeof p.name === 'string')) {
    const out = [...base];
    for (const p of patch as Record<string, Json>[]) {
      const i = out.findIndex((b) => isObj(b) && b.name === p.name);
      if (i >= 0) out[i] = strategicMerge(out[i] as Json, p);
      else out.push(p);
    }
    return out;
  }
  return patch;
}

function loadObjects(file: string): KObject[] {
  return parseAllDocuments(readFileSync(file, 'utf8'))
    .map((d) => d.toJS() as KObject | null)
    .filter((o): o is KObject => o !== null && typeof o === 'object');
}

function eachContainer(o: KObject, fn: (c: Record<string, unknown>) => void): void {
  const spec = o.spec as { template?: { spec?: { containers?: Record<string, unknown>[]; initContainers?: Record<string, unknown>[] } } } | undefined;
  for (const c of [...(spec?.template?.spec?.containers ?? []), ...(spec?.template?.spec?.initContainers ?? [])]) fn(c);
}

export function renderKustomization(dir: string): KObject[] {
  const kfile = join(dir, 'kustomization.yaml');
  if (!existsSync(kfile)) throw new Error(`no kustomization.yaml in ${dir}`);
  const k = parse(readFileSync(kfile, 'utf8')) as Kustomization;
  let objects: KObject[] = [];
  for (const r of k.resources ?? []) {
    const p = resolve(dir, r);
    objects.push(...(statSync(p).isDirectory() ? renderKustomization(p) : loadObjects(p)));
  }
  for (const patchRef of k.patches ?? []) {
    for (const patch of loadObjects(join(dir, patchRef.path))) {
      const i = objects.findIndex((o) => o.kind === patch.kind && o.metadata.name === patch.metadata.name);
      if (i < 0) throw new Error(`patch ${patchRef.path}: no ${patch.kind}/${patch.metadata.name} to patch`);
      objects[i] = strategicMerge(objects[i] as unknown as Json, patch as unknown as Json) as unknown as KObject;
    }
  }
  for (const img of k.images ?? []) {
    for (const o of objects) {
      eachContainer(o, (c) => {
        const image = typeof c.image === 'string' ? c.image : '';
        const [name] = image.split(':');
        if (name !== img.name) return;
        c.image = `${img.newName ?? img.name}${img.newTag ? `:${img.newTag}` : image.includes(':') ? `:${image.split(':')[1]}` : ''}`;
      });
    }
  }
  for (const r of k.replicas ?? []) {
    const o = objects.find((x) => x.metadata.name === r.name && (x.kind === 'Deployment' || x.kind === 'StatefulSet'));
    if (!o) throw new Error(`replicas: no workload ${r.name}`);
    (o.spec as Record<string, unknown>).replicas = r.count;
  }
  for (const l of k.labels ?? []) {
    for (const o of objects) o.metadata.labels = { ...o.metadata.labels, ...l.pairs };
  }
  if (k.namespace) {
    const ns = k.namespace;
    objects = objects.map((o) => {
      if (o.kind === 'Namespace') return { ...o, metadata: { ...o.metadata, name: ns } };
      if (o.kind === 'ClusterRoleBinding' || o.kind === 'RoleBinding') {
        const subjects = (o.subjects as { kind: string; namespace?: string }[] | undefined)?.map((s) => (s.kind === 'ServiceAccount' ? { ...s, namespace: ns } : s));
        o = { ...o, subjects };
      }
      return CLUSTER_SCOPED.has(o.kind) ? o : { ...o, metadata: { ...o.metadata, namespace: ns } };
    });
  }
  return objects;
}

export const INFRA_DIR = resolve(dirname(__dirname), '..', 'infra');
