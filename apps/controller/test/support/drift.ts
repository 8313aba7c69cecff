import type { K8sTestServer } from '@paddock/k8s-testserver';
import { sql, type Kysely } from 'kysely';
import { buildRunnerObjects } from '../../src/builders/runner.manifests';
import { LABEL_COMPONENT, LABEL_RUNNER_UID, runnerNatsSecretName, runnerNamespace } from '../../src/builders/names';
import type { ControllerReadModels } from '@paddock/contracts';
import { DesiredSource } from '../../src/desired-source';

interface Container {
  name?: string;
  image?: string;
  env?: { name: string; value?: string }[];
}
interface DeploymentLike {
  spec?: { replicas?: number; template?: { metadata?: { annotations?: Record<string, string> }; spec?: { containers?: Container[] } } };
}

const envOf = (c: Container | undefined): string => JSON.stringify((c?.env ?? []).map((e) => [e.name, e.value ?? '']));

/**
 * Differences between the projections (`cp_runners_v1`, read as the database's owner: every cluster) and the cluster: every live runner's
 * Deployment (revision annotation, image, env, replicas) and ConfigMap content must be exactly what
 * the builders make of its projection, with its NATS credentials Secret when NATS has
 * authentication; deleted runners must have left nothing behind.
 */
export async function driftOf(db: Kysely<ControllerReadModels>, k8s: K8sTestServer, nats: { url: string; auth: boolean }): Promise<string[]> {
  const clusters = await sql<{ cluster_id: string }>`select distinct cluster_id from cp_runners_v1`.execute(db);
  const drift: string[] = [];
  const live = new Set<string>();
  for (const { cluster_id } of clusters.rows) {
    for (const d of await new DesiredSource(db, cluster_id).all()) {
      if (d.deleting) {
        drift.push(`${d.runnerId}: still deleting`);
        continue;
      }
      live.add(d.uid);
      // The credentials' content changes with every rotation; what must match is where they go.
      const objs = buildRunnerObjects(d, { natsUrl: nats.url, ...(nats.auth ? { natsCreds: 'rotated' } : {}) });
      if (nats.auth && !k8s.get('v1', 'Secret', runnerNatsSecretName(d.runnerId), runnerNamespace(d.runnerId))) drift.push(`${d.runnerId}: no NATS credentials Secret`);
      const wantDep = objs.find((o) => o.kind === 'Deployment') as (DeploymentLike & { metadata: { name: string; namespace?: string } }) | undefined;
      const wantCm = objs.find((o) => o.kind === 'ConfigMap') as { metadata: { name: string; namespace?: string }; data?: Record<string, string> } | undefined;
      if (!wantDep || !wantCm) throw new Error('builders lost the Deployment or ConfigMap');
      const dep = k8s.get('apps/v1', 'Deployment', wantDep.metadata.name, wantDep.metadata.namespace) as DeploymentLike | undefined;
      const cm = k8s.get('v1', 'ConfigMap', wantCm.metadata.name, wantCm.metadata.namespace) as { data?: Record<string, string> } | undefined;
      if (!dep) drift.push(`${d.runnerId}: no Deployment`);
      else {
        const got = dep.spec?.template;
        const want = wantDep.spec?.template;
        if (got?.metadata?.annotations?.['paddock.dev/revision'] !== want?.metadata?.annotations?.['paddock.dev/revision']) drift.push(`${d.runnerId}: revision`);
        if (got?.spec?.containers?.[0]?.image !== want?.spec?.containers?.[0]?.image) drift.push(`${d.runnerId}: image`);
        if (envOf(got?.spec?.containers?.[0]) !== envOf(want?.spec?.containers?.[0])) drift.push(`${d.runnerId}: env ${envOf(got?.spec?.containers?.[0])} != ${envOf(want?.spec?.containers?.[0])}`);
        if (dep.spec?.replicas !== wantDep.spec?.replicas) drift.push(`${d.runnerId}: replicas ${dep.spec?.replicas} != ${wantDep.spec?.replicas}`);
      }
      if (!cm) drift.push(`${d.runnerId}: no ConfigMap`);
      else if (JSON.stringify(cm.data) !== JSON.stringify(wantCm.data)) drift.push(`${d.runnerId}: ConfigMap content`);
    }
  }
  for (const ns of k8s.list('v1', 'Namespace')) {
    const uid = ns.metadata?.labels?.[LABEL_RUNNER_UID];
    if (uid && ns.metadata?.labels?.[LABEL_COMPONENT] === 'runner' && !live.has(uid)) drift.push(`namespace ${ns.metadata?.name ?? ''} of a deleted runner`);
  }
  return drift;
}
