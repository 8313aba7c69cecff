import { DEFAULT_SNAPSHOT_VOLUME, httpEndpointsOf, PaddockError, serviceViolations, type FieldViolation, type ResolvedContainer, type ResolvedSandboxSpec } from '@paddock/contracts';
import { z } from 'zod';
import { launchSecurityOf } from './launch-security';
import type { LaunchContainer, LaunchProbe, LaunchSpec, LaunchVolume, LaunchVolumeMount } from '../backend/sandbox-backend';

/**
 * The parts of a launch beyond the primary container: the other containers, the init
 * containers, the volumes and their mounts, and the primary's startup probe. Pure.
 */

/** `Probe { exec, periodSeconds, timeoutSeconds, failureThreshold, initialDelaySeconds }` with the Kubernetes defaults. */
const StartupProbeSchema = z.strictObject({
  exec: z.array(z.string().min(1)).min(1),
  periodSeconds: z.number().positive().max(3600).default(10),
  timeoutSeconds: z.number().positive().max(3600).default(1),
  failureThreshold: z.number().int().positive().max(10_000).default(3),
  initialDelaySeconds: z.number().nonnegative().max(3600).default(0),
});

function containerField(resolved: ResolvedSandboxSpec, c: ResolvedContainer, init: boolean): string {
  const list = init ? resolved.initContainers : resolved.containers;
  return `${init ? 'initContainers' : 'containers'}[${list.indexOf(c)}]`;
}

function probeOf(c: ResolvedContainer): unknown {
  return c.passthrough.startupProbe;
}

/**
 * What the request asks that no backend could run as written: a malformed startup probe, or a
 * probe on a container other than the primary (only the primary's readiness gates RUNNING).
 * Each violation names the field.
 */
export function podViolations(resolved: ResolvedSandboxSpec): FieldViolation[] {
  const out: FieldViolation[] = [];
  resolved.volumes.forEach((v, i) => {
    // The sandbox's own disk is what a snapshot captures, so it is the one volume a snapshot restores.
    if (v.restoreFromSnapshotId && v.name !== DEFAULT_SNAPSHOT_VOLUME) {
      out.push({
        field: `volumes[${i}].scratch.restoreFromSnapshotId`,
        rule: 'runner_capability',
        description: `only the sandbox's own disk, volume ${JSON.stringify(DEFAULT_SNAPSHOT_VOLUME)}, restores from a snapshot`,
      });
    }
  });
  for (const [list, init] of [
    [resolved.containers, false],
    [resolved.initContainers, true],
  ] as const) {
    for (const c of list) {
      const probe = probeOf(c);
      if (probe === undefined) continue;
      const field = `${containerField(resolved, c, init)}.startupProbe`;
      if (init || c.name !== resolved.primaryContainer) {
        out.push({ field, rule: 'primary_only', description: 'a startup probe gates the sandbox, so only the primary container may have one' });
        continue;
      }
      const r = StartupProbeSchema.safeParse(probe);
      if (!r.success) {
        for (const issue of r.error.issues) {
          out.push({ field: [field, ...issue.path.map(String)].join('.'), rule: issue.code, description: issue.message });
        }
      }
    }
  }
  return out;
}

/**
 * Refuses a spec whose pod parts or services cannot be run as written (see podViolations and
 * serviceViolations). A public service needs a backend that relays connections to the sandbox's
 * ports (`portForward`); on any other it is refused, never accepted without a way in.
 */
export function checkPod(resolved: ResolvedSandboxSpec, backend: { portForward: boolean }): void {
  const violations = [...podViolations(resolved), ...serviceViolations(resolved.services.length > 0 ? resolved.services : undefined)];
  if (!backend.portForward) {
    const publicPorts = new Set(httpEndpointsOf(resolved.services).map((e) => e.port));
    resolved.services.forEach((s, i) => {
      if (publicPorts.has(s.port as number)) {
        violations.push({ field: `services[${i}].visibility`, rule: 'runner_capability', description: 'this runner cannot relay connections into its sandboxes' });
      }
    });
  }
  if (violations.length === 0) return;
  throw new PaddockError('invalid_argument', `the sandbox spec cannot be run as written: ${violations.map((v) => `${v.field} (${v.rule})`).join(', ')}`, {
    reason: 'CWSANDBOX_INVALID_REQUEST',
    violations,
  });
}

function mountsOf(c: ResolvedContainer): LaunchVolumeMount[] {
  return c.volumeMounts.map((m) => ({ volume: m.volume, mountPath: m.mountPath, readOnly: m.readOnly, ...(m.subPath ? { subPath: m.subPath } : {}) }));
}

function launchContainerOf(c: ResolvedContainer): LaunchContainer {
  return {
    name: c.name,
    image: c.image,
    command: [...c.command, ...c.args],
    env: c.env,
    ...(c.workingDir ? { workingDir: c.workingDir } : {}),
    files: c.files.map((f) => ({ path: f.path, content: Buffer.from(f.content, 'base64') })),
    volumeMounts: mountsOf(c),
    ...launchSecurityOf(c),
  };
}

/**
 * A volume as the backend mounts it. A scratch volume without a size gets the sandbox's disk cap
 * (disk) or its memory limit (memory); registered volumes and snapshot restores are passed on by
 * name so a backend that cannot mount them refuses them instead of mounting an empty directory.
 */
function volumeOf(v: ResolvedSandboxSpec['volumes'][number], defaults: { diskBytes: number; memoryBytes: number }): LaunchVolume {
  const memory = v.medium === 'STORAGE_MEDIUM_MEMORY';
  return {
    name: v.name,
    medium: memory ? 'memory' : 'disk',
    sizeBytes: v.sizeBytes ?? (memory ? defaults.memoryBytes : defaults.diskBytes),
    ...(v.volumeId ? { volumeId: v.volumeId } : {}),
    ...(v.restoreFromSnapshotId ? { restoreFromSnapshotId: v.restoreFromSnapshotId } : {}),
  };
}

/** The launch fields for everything but the primary's own process (absent when unused), and the ports its public services serve. */
export function podLaunchFields(
  resolved: ResolvedSandboxSpec,
  primary: ResolvedContainer,
  defaults: { diskBytes: number; memoryBytes: number },
): Pick<LaunchSpec, 'primaryName' | 'volumeMounts' | 'sidecars' | 'initContainers' | 'volumes' | 'startupProbe' | 'servicePorts' | 'diskRestoreSnapshotId'> {
  const sidecars = resolved.containers.filter((c) => c !== primary).map(launchContainerOf);
  const inits = resolved.initContainers.map(launchContainerOf);
  const probe = probeOf(primary);
  const mounts = mountsOf(primary);
  const servicePorts = [...new Set(httpEndpointsOf(resolved.services).map((e) => e.port))];
  // A restore of the sandbox's own disk is not a volume to mount: the disk is there already.
  const diskRestore = resolved.volumes.find((v) => v.name === DEFAULT_SNAPSHOT_VOLUME && v.restoreFromSnapshotId);
  const volumes = resolved.volumes.filter((v) => v !== diskRestore);
  return {
    ...(diskRestore?.restoreFromSnapshotId ? { diskRestoreSnapshotId: diskRestore.restoreFromSnapshotId } : {}),
    primaryName: primary.name,
    ...(mounts.length > 0 ? { volumeMounts: mounts } : {}),
    ...(sidecars.length > 0 ? { sidecars } : {}),
    ...(inits.length > 0 ? { initContainers: inits } : {}),
    ...(volumes.length > 0 ? { volumes: volumes.map((v) => volumeOf(v, defaults)) } : {}),
    ...(probe !== undefined ? { startupProbe: StartupProbeSchema.parse(probe) satisfies LaunchProbe } : {}),
    ...(servicePorts.length > 0 ? { servicePorts } : {}),
  };
}
