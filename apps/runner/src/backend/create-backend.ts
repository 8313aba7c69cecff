import { join } from 'node:path';
import type { RunnerEnv } from '../config/env';
import { KubeConfig } from '@kubernetes/client-node';
import { KubernetesBackend } from './kubernetes';
import { LocalBackend } from './local';
import { readRegistryAuthFile } from './local/images/auth-file';
import { parseImageAliases, type LocalBackendOptions } from './local/options';
import type { SandboxBackend } from './sandbox-backend';

/** Picks the backend named by `PADDOCK_RUNNER_BACKEND`. */
export function createBackend(env: RunnerEnv, runnerId: string): SandboxBackend {
  switch (env.PADDOCK_RUNNER_BACKEND) {
    case 'local':
      return new LocalBackend({ runnerId, stateDir: join(env.PADDOCK_RUNNER_STATE_DIR, runnerId), imageAliases: parseImageAliases(env.PADDOCK_IMAGE_ALIASES), ...localRegistryOptions(env) });
    case 'kubernetes': {
      // In-cluster service account when running in a pod, else KUBECONFIG / ~/.kube/config.
      const kubeConfig = new KubeConfig();
      kubeConfig.loadFromDefault();
      const runtimeClass = env.PADDOCK_SANDBOX_RUNTIME_CLASS;
      return new KubernetesBackend({
        runnerId,
        namespace: env.PADDOCK_SANDBOX_NAMESPACE ?? `paddock-sandboxes-${runnerId}`,
        kubeConfig,
        ...(runtimeClass ? { runtimeClassName: runtimeClass } : {}),
        runtimeClasses: env.PADDOCK_SANDBOX_RUNTIME_CLASSES,
        userNamespaces: env.PADDOCK_SANDBOX_USER_NAMESPACES,
        maxGpuCount: env.PADDOCK_SANDBOX_MAX_GPUS,
        gpuResource: env.PADDOCK_SANDBOX_GPU_RESOURCE,
        gpuTypes: env.PADDOCK_SANDBOX_GPU_TYPES,
        gpuTypeLabel: env.PADDOCK_SANDBOX_GPU_TYPE_LABEL,
        imagePullSecrets: env.PADDOCK_SANDBOX_IMAGE_PULL_SECRETS,
        clusterDomain: env.PADDOCK_SANDBOX_CLUSTER_DOMAIN,
      });
    }
  }
}

/** Registry pulls of the local backend, as the environment configures them. */
export function localRegistryOptions(env: RunnerEnv): Pick<LocalBackendOptions, 'registry'> {
  if (!env.PADDOCK_IMAGE_PULLS) return {};
  return {
    registry: {
      insecure: env.PADDOCK_REGISTRY_INSECURE,
      credentials: env.PADDOCK_REGISTRY_AUTH_FILE ? readRegistryAuthFile(env.PADDOCK_REGISTRY_AUTH_FILE) : {},
      cacheBytes: env.PADDOCK_IMAGE_CACHE_BYTES,
    },
  };
}
