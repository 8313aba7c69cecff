import type * as k8s from '@kubernetes/client-node';
import type { FieldViolation } from '@paddock/contracts';
import type { LaunchSpec } from '../sandbox-backend';
import { podEnvOf } from './pod-parts';

/**
 * A sandbox's secret env vars (`secretStores` values the gateway resolved with the create, named
 * by `LaunchSpec.secretEnvNames`) live in one Opaque Secret of its own, named after its pod and
 * deleted with it, like its pull Secret. The sandbox container reads each through
 * `env[].valueFrom.secretKeyRef`, so no value is written into the pod: not in its spec, not in
 * what `get pods` shows, not in the pod's managed fields.
 */
export function secretEnvSecretNameFor(podName: string): string {
  return `${podName}-env`;
}

/** Env names Kubernetes accepts, which are also valid Secret keys. */
const ENV_NAME = /^[-._a-zA-Z][-._a-zA-Z0-9]*$/;

/** Why the secret env cannot be delivered as asked: a name the pod cannot carry, a value that was not resolved. */
export function secretEnvViolations(spec: Pick<LaunchSpec, 'secretEnvNames' | 'env'>): FieldViolation[] {
  const out: FieldViolation[] = [];
  for (const name of spec.secretEnvNames ?? []) {
    if (!ENV_NAME.test(name)) {
      out.push({ field: 'secretStores', rule: 'env_name', description: `secret env var ${JSON.stringify(name)} is not a name a Kubernetes container's environment can hold` });
    } else if (!(name in spec.env)) {
      out.push({ field: 'secretStores', rule: 'delivered', description: `the value of secret env var ${name} was not resolved with the create` });
    }
  }
  return out;
}

/** The sandbox container's env: plain values as they are, each secret one as a reference into the sandbox's Secret. */
export function sandboxEnvOf(spec: Pick<LaunchSpec, 'secretEnvNames' | 'env'>, podName: string): k8s.V1EnvVar[] {
  const secret = new Set(spec.secretEnvNames ?? []);
  const name = secretEnvSecretNameFor(podName);
  return podEnvOf(spec.env).map((e) => (secret.has(e.name) ? { name: e.name, valueFrom: { secretKeyRef: { name, key: e.name } } } : e));
}

/**
 * The Secret holding the launch's secret values, or undefined when it has none. Immutable: nothing
 * rewrites a sandbox's credentials under it, and the kubelet need not watch it.
 */
export function buildSecretEnvSecret(spec: Pick<LaunchSpec, 'secretEnvNames' | 'env'>, podName: string, namespace: string, labels: Record<string, string>): k8s.V1Secret | undefined {
  const names = (spec.secretEnvNames ?? []).filter((n) => ENV_NAME.test(n) && n in spec.env);
  if (names.length === 0) return undefined;
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: secretEnvSecretNameFor(podName), namespace, labels },
    type: 'Opaque',
    immutable: true,
    data: Object.fromEntries(names.map((n) => [n, Buffer.from(spec.env[n] ?? '', 'utf8').toString('base64')])),
  };
}
