import type { V1Container, V1EnvVar, V1Probe, V1Volume, V1VolumeMount } from '@kubernetes/client-node';
import type { LaunchContainer, LaunchProbe, LaunchSecurityContext, LaunchSpec, LaunchVolume, LaunchVolumeMount } from '../sandbox-backend';
import { securityContextOverrides } from './security-context';

/**
 * The sandbox pod's parts beyond its one sandbox container: sidecars, init containers, scratch
 * volumes and their mounts, and the startup probe. Pure; every value comes from typed LaunchSpec
 * fields, and every container gets the same Pod Security `restricted` settings as the sandbox's.
 */

export const WORKSPACE_PATH = '/workspace';
/** Non-root uid/gid the sandbox runs as (the conventional "nonroot" of distroless images). */
export const SANDBOX_UID = 65532;
/** Scratch volumes are prefixed so a spec's names can never collide with the pod's own `workspace` and `tmp`. */
const VOLUME_PREFIX = 'v-';

/** Env names Kubernetes accepts (C_IDENTIFIER-ish, no `=`); anything else is dropped, never passed raw. */
const ENV_NAME = /^[-._a-zA-Z][-._a-zA-Z0-9]*$/;

export function podEnvOf(env: Record<string, string>): V1EnvVar[] {
  return Object.entries(env)
    .filter(([name]) => ENV_NAME.test(name))
    .map(([name, value]) => ({ name, value }));
}

/** The restricted settings every container has, with what its spec's `securityContext` sets over them (security-context.ts). */
export function containerSecurityContext(sc?: LaunchSecurityContext): NonNullable<V1Container['securityContext']> {
  return {
    runAsNonRoot: true,
    runAsUser: SANDBOX_UID,
    allowPrivilegeEscalation: false,
    privileged: false,
    readOnlyRootFilesystem: true,
    capabilities: { drop: ['ALL'] },
    seccompProfile: { type: 'RuntimeDefault' },
    ...securityContextOverrides(sc),
  };
}

export const podVolumeNameOf = (volume: string): string => `${VOLUME_PREFIX}${volume}`;

export function podVolumeMountsOf(mounts: readonly LaunchVolumeMount[]): V1VolumeMount[] {
  return mounts.map((m) => ({
    name: podVolumeNameOf(m.volume),
    mountPath: m.mountPath,
    ...(m.readOnly ? { readOnly: true } : {}),
    ...(m.subPath ? { subPath: m.subPath } : {}),
  }));
}

/** Scratch volumes as `emptyDir`: a memory one is a tmpfs (`medium: Memory`), which the kubelet counts against the pod's memory. */
export function scratchVolumesOf(volumes: readonly LaunchVolume[]): V1Volume[] {
  return volumes.map((v) => ({
    name: podVolumeNameOf(v.name),
    emptyDir: { ...(v.medium === 'memory' ? { medium: 'Memory' } : {}), sizeLimit: String(Math.max(1, v.sizeBytes)) },
  }));
}

/** Kubernetes probe timings are whole seconds, at least one (the delay may be zero); a fraction rounds up, never shorter. */
export function startupProbeOf(p: LaunchProbe): V1Probe {
  return {
    exec: { command: [...p.exec] },
    periodSeconds: Math.max(1, Math.ceil(p.periodSeconds)),
    timeoutSeconds: Math.max(1, Math.ceil(p.timeoutSeconds)),
    failureThreshold: p.failureThreshold,
    initialDelaySeconds: Math.ceil(p.initialDelaySeconds),
  };
}

function containerOf(c: LaunchContainer, resources: V1Container['resources']): V1Container {
  return {
    name: c.name,
    image: c.image,
    imagePullPolicy: 'IfNotPresent',
    ...(c.command.length > 0 ? { command: [...c.command] } : {}),
    workingDir: c.workingDir ?? WORKSPACE_PATH,
    env: podEnvOf(c.env),
    resources,
    securityContext: containerSecurityContext(c.securityContext),
    volumeMounts: [
      { name: 'workspace', mountPath: WORKSPACE_PATH },
      { name: 'tmp', mountPath: '/tmp' },
      ...podVolumeMountsOf(c.volumeMounts),
    ],
  };
}

/**
 * Sidecars, each capped at the sandbox's CPU, memory and disk and requesting none of it (the
 * sandbox container's requests are the sandbox's), and never given its GPUs: an extended
 * resource's request must equal its limit, so a sidecar holding one would take a second GPU.
 */
export function sidecarsOf(spec: LaunchSpec, limits: Record<string, string>): V1Container[] {
  const capped = Object.fromEntries(Object.entries(limits).filter(([k]) => k === 'cpu' || k === 'memory' || k === 'ephemeral-storage'));
  const requests = Object.fromEntries(Object.keys(capped).map((k) => [k, '0']));
  return (spec.sidecars ?? []).map((c) => containerOf(c, { limits: capped, requests }));
}

/** Init containers run alone, one after another, before the others: each may use the sandbox's whole allowance. */
export function initContainersOf(spec: LaunchSpec, limits: Record<string, string>): V1Container[] {
  return (spec.initContainers ?? []).map((c) => containerOf(c, { limits: { ...limits } }));
}
