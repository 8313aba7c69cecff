import type * as k8s from '@kubernetes/client-node';
import { z } from 'zod';
import { parseTieJson, type WarmTie, type WarmTieStore } from '../warm-tie';
import { statusCode } from './api-errors';
import { PLATFORM_KEY_PREFIX } from './pod-metadata';
import { podTimes } from './pod-state';
import { podNameFor, SANDBOX_ID_ANNOTATION } from './sandbox-pod';
import { buildSecretEnvSecret } from './secret-env';

/**
 * Takes' ties kept on the taken pods themselves: a runner on Kubernetes has no state dir, and a tie
 * on its pod lives exactly as long as the sandbox it ties (deleted with it, read with it at recovery).
 *
 * The environment is split as a cold launch splits it. The plain variables go in the tie's
 * annotation: a cold pod of the same create carries them in its spec, just as visible to whoever may
 * read pods. The create's delivered secret values (`secretEnvNames`) never go on the pod: they go in
 * an immutable Secret of the take's own (`<pod>-take-env`; the pod's `<pod>-env` Secret, if its
 * template had one, is immutable and the template's), owned by the pod so the cluster deletes it
 * with the pod even when the runner does not, and read back at recovery. The Secret is written
 * before the annotation, which is the tie's commit: a runner killed between the two leaves an
 * untied pod (reaped as idle) and a Secret that goes with it.
 */
export const WARM_TAKE_ANNOTATION = `${PLATFORM_KEY_PREFIX}warm-take`;

export function takeEnvSecretNameFor(podName: string): string {
  return `${podName}-take-env`;
}

const PodTieSchema = z.object({
  v: z.literal(1),
  sandboxId: z.string().min(1),
  labels: z.record(z.string(), z.string()),
  takenAt: z.string(),
  deadline: z.string(),
  /** The environment without its secret values. */
  env: z.record(z.string(), z.string()),
  /** The variables whose values are in the take's Secret. */
  secretEnv: z.array(z.string()),
});

export interface PodWarmTiesDeps {
  core: k8s.CoreV1Api;
  namespace: string;
  labelSelector: string;
  fieldManager: string;
  /** Merges annotations into a sandbox's pod (retried; a pod already gone throws). */
  annotate: (sandboxId: string, annotations: Record<string, string>) => Promise<void>;
}

export class PodWarmTies implements WarmTieStore {
  constructor(private readonly d: PodWarmTiesDeps) {}

  async put(tie: WarmTie, secretEnvNames: readonly string[]): Promise<void> {
    const podName = podNameFor(tie.warmId);
    const secret = new Set(secretEnvNames.filter((n) => n in tie.env));
    const plain = Object.fromEntries(Object.entries(tie.env).filter(([k]) => !secret.has(k)));
    if (secret.size > 0) await this.createSecret(podName, tie.env, [...secret]);
    const annotation: z.infer<typeof PodTieSchema> = {
      v: 1,
      sandboxId: tie.sandboxId,
      labels: tie.labels,
      takenAt: tie.takenAt,
      deadline: tie.deadline,
      env: plain,
      secretEnv: [...secret],
    };
    await this.d.annotate(tie.warmId, { [WARM_TAKE_ANNOTATION]: JSON.stringify(annotation) });
  }

  /** Nothing to drop: the tie and its Secret go with the pod, which ending the sandbox deletes. */
  remove(): void {}

  async loadAll(): Promise<WarmTie[]> {
    const list = await this.d.core.listNamespacedPod({
      namespace: this.d.namespace,
      labelSelector: this.d.labelSelector,
    });
    const out: WarmTie[] = [];
    for (const pod of list.items) {
      const warmId = pod.metadata?.annotations?.[SANDBOX_ID_ANNOTATION];
      const raw = pod.metadata?.annotations?.[WARM_TAKE_ANNOTATION];
      if (!warmId || raw === undefined) continue;
      // An unreadable tie (nothing the runner writes) ties nothing: the pod is reaped as idle.
      const tie = parseTieJson(PodTieSchema, raw);
      if (!tie) continue;
      const { secretEnv, env, ...rest } = tie;
      const secrets =
        secretEnv.length > 0 ? await this.readSecret(takeEnvSecretNameFor(podNameFor(warmId))) : {};
      const missing = secretEnv.filter((n) => !(n in secrets));
      out.push({
        ...rest,
        warmId,
        // A pod's deadline never moves (Kubernetes sandboxes do not pause): the pod's own is the warm one.
        warmDeadline: podTimes(pod).deadline.toISOString(),
        env: { ...env, ...secrets },
        ...(missing.length > 0
          ? {
              unrecoverable: `the secret env of this taken warm sandbox is gone (${missing.join(', ')}); create it again`,
            }
          : {}),
      });
    }
    return out;
  }

  close(): void {}

  private async createSecret(
    podName: string,
    env: Record<string, string>,
    names: string[],
  ): Promise<void> {
    const pod = await this.d.core.readNamespacedPod({ namespace: this.d.namespace, name: podName });
    const uid = pod.metadata?.uid;
    const built = buildSecretEnvSecret(
      { env, secretEnvNames: names },
      podName,
      this.d.namespace,
      pod.metadata?.labels ?? {},
    );
    if (!built) return;
    const owner = uid
      ? { ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: podName, uid }] }
      : {};
    const body: k8s.V1Secret = {
      ...built,
      metadata: { ...built.metadata, name: takeEnvSecretNameFor(podName), ...owner },
    };
    try {
      await this.d.core.createNamespacedSecret({
        namespace: this.d.namespace,
        body,
        fieldManager: this.d.fieldManager,
      });
    } catch (e) {
      // A pod is taken once: an existing Secret is this take's, written by an attempt cut short.
      if (statusCode(e) !== 409) throw e;
    }
  }

  /** The Secret's values; none when it is gone (a 404), and any other failure fails the recovery. */
  private async readSecret(name: string): Promise<Record<string, string>> {
    try {
      const s = await this.d.core.readNamespacedSecret({ namespace: this.d.namespace, name });
      return Object.fromEntries(
        Object.entries(s.data ?? {}).map(([k, v]) => [
          k,
          Buffer.from(v, 'base64').toString('utf8'),
        ]),
      );
    } catch (e) {
      if (statusCode(e) === 404) return {};
      throw e;
    }
  }
}
