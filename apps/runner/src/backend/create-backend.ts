import { join } from 'node:path';
import type { RunnerEnv } from '../config/env';
import { KubeConfig } from '@kubernetes/client-node';
import { KubernetesBackend } from './kubernetes';
import { LocalBackend } from './local';
import { parseImageAliases } from './local/options';
import type { SandboxBackend } from './sandbox-backend';

/** Picks the backend named by `PADDOCK_RUNNER_BACKEND`. */
export function createBackend(env: RunnerEnv, runnerId: string): SandboxBackend {
  switch (env.PADDOCK_RUNNER_BACKEND) {
    case 'local':
      return new LocalBackend({ runnerId, stateDir: join(env.PADDOCK_RUNNER_STATE_DIR, runnerId), imageAliases: parseImageAliases(env.PADDOCK_IMAGE_ALIASES) });
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
      });
    }
  }
}
