import { AppsV1Api, CoreV1Api, HttpMethod, RbacAuthorizationV1Api, KubernetesObjectApi, PatchStrategy, ServerConfiguration, createConfiguration, type Configuration, type KubeConfig } from '@kubernetes/client-node';
import { Agent as HttpAgent } from 'node:http';
import { buildRunnerObjects } from '../builders/runner.manifests';
import { MANAGED_BY_CONTROLLER } from '@paddock/contracts';
import { FIELD_MANAGER, LABEL_CLUSTER, LABEL_COMPONENT, LABEL_MANAGED_BY, LABEL_RUNNER, LABEL_RUNNER_UID, legacySandboxRoleName, runnerName, runnerNamespace, sandboxNamespace } from '../builders/names';
import type { DesiredRunner } from '../desired';
import { diagnoseInstall, type Diagnosis, type ObservedDeployment, type ObservedNode, type ObservedPod } from '../reconcile/diagnosis';
import type { RunnerCredentialSource } from '../runner-credentials';
import type { ClusterDriver } from './driver';
import { fenceAgent, NotLeaderError } from './fenced-connection';

export interface KubernetesDriverOptions {
  natsUrl: string;
  /** Issues each runner's NATS user, delivered as a Secret; without it runners get none. */
  credentials?: RunnerCredentialSource;
  /**
   * Only objects labelled with this cluster id are garbage-collected (several clusters, or a
   * shared API server in tests, must never tear down each other's runners).
   */
  clusterId?: string;
  now?: () => Date;
  /**
   * Fencing: checked right before every write, so a deposed leader that resumes in the middle of
   * a reconcile stops writing at once instead of finishing its now stale plan.
   */
  mayWrite?: () => boolean;
}

/**
 * The API clients' configuration with the fence on every non-GET request, checked twice: before
 * the request is built (cheap refusal) and as each of its chunks goes to the socket
 * (`FencedConnection`). The first check alone leaves awaits and a TCP connect between the check
 * and the send; a leader frozen (SIGSTOP, GC pause) in that gap would otherwise send its stale
 * write on resume.
 */
function fencedConfiguration(kc: KubeConfig, mayWrite: () => boolean): Configuration {
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error('kubeconfig has no current cluster');
  return createConfiguration({
    baseServer: new ServerConfiguration(cluster.server, {}),
    authMethods: { default: kc },
    promiseMiddleware: [
      {
        pre: (ctx) => {
          if (ctx.getHttpMethod() === HttpMethod.GET) return Promise.resolve(ctx);
          if (!mayWrite()) return Promise.reject(new NotLeaderError());
          ctx.setAgent(fenceAgent(ctx.getAgent() ?? new HttpAgent(), mayWrite));
          return Promise.resolve(ctx);
        },
        post: (rsp) => Promise.resolve(rsp),
      },
    ],
  });
}

function statusCode(e: unknown): number | undefined {
  const code = (e as { code?: unknown }).code;
  return typeof code === 'number' ? code : undefined;
}

async function orUndefinedOn404<T>(p: Promise<T>): Promise<T | undefined> {
  try {
    return await p;
  } catch (e) {
    if (statusCode(e) === 404) return undefined;
    throw e;
  }
}

/**
 * Runners as Deployments: desired objects come from the pure builders and are applied with
 * server-side apply under one field manager (`paddock-controller`, force = true, so a field another
 * manager grabbed is taken back instead of flapping between writers).
 */
export class KubernetesDriver implements ClusterDriver {
  readonly kind = 'kubernetes' as const;
  private readonly objects: KubernetesObjectApi;
  private readonly core: CoreV1Api;
  private readonly apps: AppsV1Api;
  private readonly rbac: RbacAuthorizationV1Api;

  constructor(
    kc: KubeConfig,
    private readonly opts: KubernetesDriverOptions,
  ) {
    const mayWrite = opts.mayWrite;
    if (mayWrite) {
      const config = fencedConfiguration(kc, mayWrite);
      this.objects = new KubernetesObjectApi(config);
      this.core = new CoreV1Api(config);
      this.apps = new AppsV1Api(config);
      this.rbac = new RbacAuthorizationV1Api(config);
    } else {
      this.objects = KubernetesObjectApi.makeApiClient(kc);
      this.core = kc.makeApiClient(CoreV1Api);
      this.apps = kc.makeApiClient(AppsV1Api);
      this.rbac = kc.makeApiClient(RbacAuthorizationV1Api);
    }
  }

  async apply(d: DesiredRunner): Promise<void> {
    // Re-issued once half of its lifetime is gone; the same credentials otherwise, so re-applying
    // the Secret is a no-op. A new controller process issues new ones once (nothing is lost: the
    // runner keeps its connection and re-reads the mounted file at its next reconnect).
    const natsCreds = await this.opts.credentials?.credsFor(d.runnerId);
    for (const obj of buildRunnerObjects(d, { natsUrl: this.opts.natsUrl, ...(natsCreds ? { natsCreds } : {}) })) {
      this.fence();
      await this.objects.patch(obj, undefined, undefined, FIELD_MANAGER, true, PatchStrategy.ServerSideApply);
    }
    // Earlier releases granted the sandbox namespace through a Role of their own (which needed
    // `escalate`); its binding goes once the new one is in place, then the Role (404: gone already).
    const sb = sandboxNamespace(d.runnerId);
    const legacy = legacySandboxRoleName(d.runnerId);
    this.fence();
    await orUndefinedOn404(this.rbac.deleteNamespacedRoleBinding({ name: legacy, namespace: sb }));
    this.fence();
    await orUndefinedOn404(this.rbac.deleteNamespacedRole({ name: legacy, namespace: sb }));
  }

  private fence(): void {
    if (this.opts.mayWrite && !this.opts.mayWrite()) throw new NotLeaderError();
  }

  async observe(d: DesiredRunner): Promise<Diagnosis> {
    const ns = runnerNamespace(d.runnerId);
    const deployment = (await orUndefinedOn404(this.apps.readNamespacedDeployment({ name: runnerName(d.runnerId), namespace: ns }))) as ObservedDeployment | undefined;
    const pods = (await this.core.listNamespacedPod({ namespace: ns, labelSelector: `${LABEL_RUNNER}=${d.runnerId},${LABEL_COMPONENT}=runner` })).items as ObservedPod[];
    const nodes = (await this.core.listNode({})).items as ObservedNode[];
    const events = await this.core.listNamespacedEvent({ namespace: ns });
    const warnings = events.items.filter((e) => e.type === 'Warning').map((e) => ({ reason: e.reason, message: e.message }));
    return diagnoseInstall({ deployment, pods, nodes, warnings }, d.targetRevision, this.opts.now?.() ?? new Date());
  }

  async teardown(runnerId: string, _uid: string): Promise<boolean> {
    // Sandbox pods first (their namespace's deletion would get there too, but explicitly and at
    // once: deletion means every sandbox on the runner stops), then both namespaces, which
    // garbage-collects everything else the runner owns.
    const sb = sandboxNamespace(runnerId);
    const rn = runnerNamespace(runnerId);
    this.fence();
    await orUndefinedOn404(this.core.deleteCollectionNamespacedPod({ namespace: sb, labelSelector: `${LABEL_RUNNER}=${runnerId}`, gracePeriodSeconds: 0 }));
    for (const name of [sb, rn]) {
      const existing = await orUndefinedOn404(this.core.readNamespace({ name }));
      if (existing && !existing.metadata?.deletionTimestamp) this.fence();
      if (existing && !existing.metadata?.deletionTimestamp) await orUndefinedOn404(this.core.deleteNamespace({ name, propagationPolicy: 'Foreground' }));
    }
    const left = await Promise.all([sb, rn].map((name) => orUndefinedOn404(this.core.readNamespace({ name }))));
    return left.every((x) => x === undefined);
  }

  async listDeployed(): Promise<{ runnerId: string; uid: string }[]> {
    const cluster = this.opts.clusterId ? `,${LABEL_CLUSTER}=${this.opts.clusterId}` : '';
    const list = await this.core.listNamespace({ labelSelector: `${LABEL_MANAGED_BY}=${MANAGED_BY_CONTROLLER},${LABEL_COMPONENT}=runner${cluster}` });
    return list.items
      .map((n) => ({ runnerId: n.metadata?.labels?.[LABEL_RUNNER] ?? '', uid: n.metadata?.labels?.[LABEL_RUNNER_UID] ?? '' }))
      .filter((r) => r.runnerId && r.uid);
  }

  async close(): Promise<void> {}
}
