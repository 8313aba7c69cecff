import type { SandboxMode } from '@paddock/contracts';
import * as m_contracts from '@paddock/contracts';
import * as m_defaults from '../defaults';
import * as m_network from '../network';
import * as m_spec_reader from '../spec-reader';
import { type Sink } from '../violations';
import * as m_violations from '../violations';
import { type ContainerRead } from './container';
import * as m_container from './container';
import * as m_fields from './fields';
import { type NetworkRead } from './network';
import * as m_spec_network from './network';
import { type VolumeRead } from './volumes';
import * as m_volumes from './volumes';

// Hot-path helpers bound once: transpilers (tsx/esbuild) turn imported names into getter
// calls on every use, which cost ~10% of a resolution. Locals are plain calls.
const { SANDBOX_MODES } = m_contracts;
const { PLATFORM_DEFAULTS, SPEC_LIMITS } = m_defaults;
const { isObj } = m_network;
const { checkKeys, readArray, readInt, readObject, readString, readStringArray, readStringMap } =
  m_spec_reader;
const { addViolation, idx, join, show, typeName } = m_violations;
const { readContainers } = m_container;
const { SPEC } = m_fields;
const { readNetwork } = m_spec_network;
const { readVolumes } = m_volumes;

const MODES = new Set<string>(SANDBOX_MODES);

/**
 * The sandbox request as read: every field of the schema checked for shape and for the rules
 * that need nothing but the request itself (names, references between fields, formats). No
 * policy and no runner are involved; defaults are filled by the merge.
 */
export interface SpecRead {
  containers: ContainerRead[];
  initContainers: ContainerRead[];
  primaryContainer: string;
  volumes: VolumeRead[];
  /** `maxLifetimeSeconds` as written (range checked with the other constraints). */
  requestedLifetime: number | undefined;
  annotations: Record<string, string>;
  tags: string[];
  networkIds: string[];
  runnerIds: string[];
  instanceType: string | null;
  mode: SandboxMode;
  /** The pinned runtime class, if any. */
  runtimeClass: string | undefined;
  services: Record<string, unknown>[];
  objectStorageAccess: Record<string, unknown> | null;
  network: NetworkRead;
}

/** Reads a request already known to be a JSON object. */
export function readSpec(spec: Record<string, unknown>, sink: Sink): SpecRead {
  checkKeys(spec, SPEC.keys, '', sink);
  const containers = readContainers(spec, 'containers', sink);
  const initContainers = readContainers(spec, 'initContainers', sink);
  const all = initContainers.length ? containers.concat(initContainers) : containers;
  checkUniqueNames(all, sink);
  const primaryContainer = resolvePrimary(spec, containers, sink);
  refusePrimaryInit(initContainers, sink);
  const volumes = readVolumes(spec, sink);
  checkMountedVolumes(all, volumes, sink);
  const requestedLifetime = readInt(spec, 'maxLifetimeSeconds', '', sink);
  const annotations = readStringMap(spec, 'annotations', '', sink) ?? {};
  const tags = readStringArray(spec, 'tags', '', sink) ?? [];
  const networkIds = readStringArray(spec, 'networkIds', '', sink) ?? [];
  const runnerIds = readStringArray(spec, 'runnerIds', '', sink) ?? [];
  const instanceType = readString(spec, 'instanceType', '', sink) || null;
  const mode = readMode(spec, sink);
  checkRunnerIds(runnerIds, mode, sink);
  const runtimeClass = readString(spec, 'runtimeClass', '', sink) || undefined;
  const services = readServices(spec, sink);
  const objectStorageAccess = readObject(spec, 'objectStorageAccess', '', sink) ?? null;
  const network = readNetwork(spec, sink);
  return {
    containers,
    initContainers,
    primaryContainer,
    volumes,
    requestedLifetime,
    annotations,
    tags,
    networkIds,
    runnerIds,
    instanceType,
    mode,
    runtimeClass,
    services,
    objectStorageAccess,
    network,
  };
}

function checkUniqueNames(all: ContainerRead[], sink: Sink): void {
  const names = new Set<string>();
  for (const w of all) {
    if (!w.name) continue;
    if (names.has(w.name)) {
      addViolation(
        sink,
        join(w.path, 'name'),
        'duplicate',
        `container name ${show(w.name)} is used twice`,
      );
    }
    names.add(w.name);
  }
}

function checkMountedVolumes(all: ContainerRead[], volumes: VolumeRead[], sink: Sink): void {
  const volumeNames = new Set(volumes.map((v) => v.out.name));
  for (const w of all) {
    w.volumeMounts.forEach((m, i) => {
      if (!volumeNames.has(m.volume)) {
        addViolation(
          sink,
          join(idx(join(w.path, 'volumeMounts'), i), 'volume'),
          'unknown_volume',
          `volume ${show(m.volume)} is not declared in volumes`,
          { requested: m.volume },
        );
      }
    });
  }
}

function readMode(spec: Record<string, unknown>, sink: Sink): SandboxMode {
  const modeRaw = readString(spec, 'mode', '', sink);
  if (modeRaw !== undefined && !MODES.has(modeRaw)) {
    addViolation(
      sink,
      'mode',
      'invalid_enum',
      `must be one of ${SANDBOX_MODES.join(', ')}, got ${show(modeRaw)}`,
    );
  }
  return modeRaw !== undefined && MODES.has(modeRaw)
    ? (modeRaw as SandboxMode)
    : 'SANDBOX_MODE_UNSPECIFIED';
}

function readServices(spec: Record<string, unknown>, sink: Sink): Record<string, unknown>[] {
  const servicesRaw = readArray(spec, 'services', '', sink, 256) ?? [];
  const services: Record<string, unknown>[] = [];
  servicesRaw.forEach((s: unknown, i) => {
    if (isObj(s)) services.push(s);
    else {
      addViolation(
        sink,
        idx('services', i),
        'type',
        `expected a service object, got ${typeName(s)}`,
      );
    }
  });
  return services;
}

/**
 * An init container runs to completion before the others start, so it cannot be the container
 * whose exit ends the sandbox; `primary: true` on one is refused rather than ignored.
 */
function refusePrimaryInit(initContainers: ContainerRead[], sink: Sink): void {
  for (const w of initContainers) {
    if (w.primaryFlag !== true) continue;
    addViolation(
      sink,
      join(w.path, 'primary'),
      'invalid_value',
      'an init container runs to completion before the others, so it cannot be the primary container',
    );
  }
}

function resolvePrimary(
  spec: Record<string, unknown>,
  containers: ContainerRead[],
  sink: Sink,
): string {
  const named = readString(spec, 'primaryContainer', '', sink);
  const flagged = containers.filter((w) => w.primaryFlag === true);
  if (flagged.length > 1) {
    addViolation(
      sink,
      join(flagged[1]?.path ?? 'containers', 'primary'),
      'duplicate',
      'only one container may be marked primary',
    );
  }
  if (named !== undefined && named !== '') {
    if (!containers.some((w) => w.name === named)) {
      addViolation(
        sink,
        'primaryContainer',
        'unknown_container',
        `no container is named ${show(named)}`,
        { requested: named },
      );
    }
    if (flagged[0] && flagged[0].name !== named) {
      addViolation(
        sink,
        'primaryContainer',
        'invalid_value',
        `primaryContainer ${show(named)} disagrees with the container marked primary (${show(flagged[0].name)})`,
      );
    }
    return named;
  }
  if (flagged[0]) return flagged[0].name;
  if (containers.length === 1) return containers[0]?.name ?? PLATFORM_DEFAULTS.containerName;
  if (containers.length > 1) {
    addViolation(
      sink,
      'primaryContainer',
      'required',
      'primaryContainer is required when the sandbox has several containers',
    );
  }
  return containers[0]?.name ?? PLATFORM_DEFAULTS.containerName;
}

function checkRunnerIds(ids: string[], mode: SandboxMode, sink: Sink): void {
  if (ids.length === 0) return;
  if (mode !== 'SANDBOX_MODE_CKS') {
    addViolation(
      sink,
      'runnerIds',
      'runner_ids_requires_cks',
      'runnerIds is valid only with mode SANDBOX_MODE_CKS',
      { requested: mode },
    );
  }
  if (ids.length > SPEC_LIMITS.maxRunnerIds) {
    addViolation(
      sink,
      'runnerIds',
      'max_items',
      `at most ${SPEC_LIMITS.maxRunnerIds} runner IDs, got ${ids.length}`,
      { requested: ids.length, limit: SPEC_LIMITS.maxRunnerIds },
    );
  }
  let bytes = 0;
  const seen = new Set<string>();
  ids.forEach((id, i) => {
    bytes += id.length;
    if (id.trim() === '') {
      addViolation(sink, idx('runnerIds', i), 'required', 'runner IDs must not be blank');
    }
    if (seen.has(id)) {
      addViolation(sink, idx('runnerIds', i), 'duplicate', `runner ID ${show(id)} is listed twice`);
    }
    seen.add(id);
  });
  if (bytes > SPEC_LIMITS.maxRunnerIdsBytes) {
    addViolation(
      sink,
      'runnerIds',
      'max_size',
      `runnerIds exceeds ${SPEC_LIMITS.maxRunnerIdsBytes} bytes`,
      { requested: bytes, limit: SPEC_LIMITS.maxRunnerIdsBytes },
    );
  }
}
