import type {
  EgressRule,
  FieldViolation,
  IngressRule,
  Policy,
  ResolvedContainer,
  ResolvedEgress,
  ResolvedIngress,
  ResolvedSandboxSpec,
  ResolvedSecurityContext,
  ResolvedVolume,
  RunnerCapabilities,
  SandboxMode,
  ValueSource,
} from '@paddock/contracts';
import * as m_contracts from '@paddock/contracts';
import { type CompiledPolicy } from './compile';
import * as m_compile from './compile';
import * as m_defaults from './defaults';
import * as m_image from './image';
import { type NormRule } from './network';
import * as m_network from './network';
import * as m_quantity from './quantity';
import * as m_spec_reader from './spec-reader';
import { type Sink } from './violations';
import * as m_violations from './violations';

// Hot-path helpers bound once: transpilers (tsx/esbuild) turn imported names into getter
// calls on every use, which cost ~10% of a resolution. Locals are plain calls.
const { FULL_CAPABILITIES, MAX_LIFETIME_SECONDS, FALLBACK_LIFETIME_SECONDS, SANDBOX_MODES } =
  m_contracts;
const { compilePolicy, memoized, normCapability } = m_compile;
const { PLATFORM_DEFAULTS, SPEC_LIMITS } = m_defaults;
const { imageAllowedByList, imageAllowedByRegistries } = m_image;
const { checkRule, describeRule, isObj, ruleContained, ruleKey } = m_network;
const { formatCpu, formatMemory, parseCpuMillis, parseMemoryBytes } = m_quantity;
const {
  checkKeys,
  readArray,
  readBool,
  readInt,
  readObject,
  readString,
  readStringArray,
  readStringMap,
} = m_spec_reader;
const { addViolation, idx, join, mapKey, show, sortViolations, typeName } = m_violations;

/**
 * Resolution (issue 2 point 2, SPEC §3.3): merge the request over the policy's defaults (the
 * request wins, base attachments always apply), fill every default, then check every constraint
 * on the fully resolved spec. Nothing is ever narrowed: a violation is a rejection, and the
 * rejection lists every violated constraint with the field, the requested value and the limit.
 *
 * This is the hot path of every create, so the request is checked by hand (no zod; measured
 * ~5 µs/op for zod alone on this machine against a 5 µs budget for the whole resolution).
 */

export interface ResolveInput {
  /** The runner's policy; `null` = the platform {@link DEFAULT_POLICY}. */
  policy: Policy | null;
  /** The sandbox request (camelCase JSON, unvalidated). */
  spec: unknown;
  /** What the target runner can enforce; omitted = everything ({@link FULL_CAPABILITIES}). */
  capabilities?: RunnerCapabilities;
}

export type ResolveResult =
  { ok: true; resolved: ResolvedSandboxSpec } | { ok: false; violations: FieldViolation[] };

const TOP_KEYS = new Set([
  'containers',
  'primaryContainer',
  'initContainers',
  'volumes',
  'services',
  'maxLifetimeSeconds',
  'networkIds',
  'objectStorageAccess',
  'tags',
  'runnerIds',
  'network',
  'annotations',
  'instanceType',
  'mode',
  'runtimeClass',
]);
const CONTAINER_KEYS = new Set([
  'name',
  'image',
  'command',
  'args',
  'environmentVariables',
  'resources',
  'resourceRequirements',
  'workingDir',
  'securityContext',
  'files',
  'volumeMounts',
  'primary',
  'secretStores',
  'imagePullCredentials',
  'startupProbe',
]);
const PASSTHROUGH_CONTAINER_KEYS = [
  'secretStores',
  'imagePullCredentials',
  'startupProbe',
] as const;
const RESOURCES_KEYS = new Set(['cpu', 'memory', 'gpu']);
const REQUIREMENTS_KEYS = new Set(['requests', 'limits']);
const GPU_KEYS = new Set(['count', 'type', 'memoryGb']);
const SECURITY_KEYS = new Set([
  'runAsUser',
  'runAsGroup',
  'privileged',
  'allowPrivilegeEscalation',
  'readOnlyRootFilesystem',
  'capabilitiesAdd',
  'capabilitiesDrop',
  'seccompProfile',
]);
const FILE_KEYS = new Set(['path', 'content']);
const MOUNT_KEYS = new Set(['volume', 'mountPath', 'readOnly', 'subPath']);
const VOLUME_KEYS = new Set(['name', 'scratch', 'volumeId']);
const SCRATCH_KEYS = new Set(['size', 'medium', 'restoreFromSnapshotId']);
const NETWORK_KEYS = new Set(['egress', 'ingress', 'denyEgress', 'denyIngress', 'dnsEgress']);
const MEDIA = new Set([
  'STORAGE_MEDIUM_UNSPECIFIED',
  'STORAGE_MEDIUM_DISK',
  'STORAGE_MEDIUM_MEMORY',
]);
const MODES = new Set<string>(SANDBOX_MODES);
const DNS_MODES = new Set([
  'DNS_EGRESS_MODE_UNSPECIFIED',
  'DNS_EGRESS_MODE_ALLOW',
  'DNS_EGRESS_MODE_DENY',
]);

/** DNS-1123 subdomain: labels of `[a-z0-9]([-a-z0-9]*[a-z0-9])?` separated by dots, <= 253 chars. */
const DNS1123 = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const RESERVED_NAMES = new Set([
  'cw-object-store-agent',
  'cw-object-store-agent-restore',
  'dns-egress',
  'dns-egress-probe',
]);
const RESERVED_PREFIX = 'cw-object-store-agent-restore-';
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const CONSTRAINT = {
  maxCpu: 'constraints.resources.maxCpu',
  minCpu: 'constraints.resources.minCpu',
  maxMemory: 'constraints.resources.maxMemory',
  minMemory: 'constraints.resources.minMemory',
  maxGpuCount: 'constraints.resources.maxGpuCount',
  cpuCeiling: 'constraints.resources.cpuCeiling',
  memoryCeiling: 'constraints.resources.memoryCeiling',
  requireLimits: 'constraints.resources.requireLimits',
  allowedRegistries: 'constraints.image.allowedRegistries',
  allowedImages: 'constraints.image.allowedImages',
  allowedEgress: 'constraints.network.allowedEgress',
  allowedIngress: 'constraints.network.allowedIngress',
  denyHostnames: 'constraints.network.denyHttpsHostnameRules',
  allowPrivileged: 'constraints.security.allowPrivileged',
  allowedCapabilities: 'constraints.security.allowedCapabilities',
  allowedSeccomp: 'constraints.security.allowedSeccompProfiles',
  allowedRuntimeClasses: 'constraints.security.allowedRuntimeClasses',
  allowedInstanceTypes: 'constraints.instance.allowedInstanceTypes',
  deniedPrefixes: 'constraints.metadata.deniedAnnotationPrefixes',
  maxAnnotations: 'constraints.metadata.maxAnnotationCount',
  allowedMedia: 'constraints.volumes.allowedMedia',
  maxSize: 'constraints.volumes.maxSize',
} as const;

const via = (a: Amount): string =>
  a.source === 'policy'
    ? ' (from the policy default)'
    : a.source === 'platform'
      ? ' (from the platform default)'
      : '';

/** One place a quantity was given (or defaulted), for messages that point at what the user wrote. */
interface Amount {
  path: string;
  value: number;
  raw: string;
  /** A request (min bound applies) and/or a limit. */
  isRequest: boolean;
  source: ValueSource;
}

/** A quantity the spec left unset: the policy's default (which also counts as a declared limit), else the platform's. */
function defaultAmount(path: string, policyValue: number | undefined, policyRaw: string | undefined, platform: number, format: (n: number) => string): Amount {
  if (policyValue !== undefined) return { path, value: policyValue, raw: policyRaw ?? format(policyValue), isRequest: true, source: 'policy' };
  return { path, value: platform, raw: format(platform), isRequest: true, source: 'platform' };
}

interface Work {
  path: string;
  out: ResolvedContainer;
  cpu: Amount[];
  memory: Amount[];
  /** Limits declared explicitly or supplied by a policy default (see requireLimits). */
  cpuLimitDeclared: boolean;
  memoryLimitDeclared: boolean;
  gpuPath: string;
  primaryFlag: boolean | undefined;
  specImage: boolean;
}

function readQuantity(
  obj: Record<string, unknown>,
  key: 'cpu' | 'memory',
  path: string,
  sink: Sink,
): { value: number; raw: string } | undefined {
  const v = obj[key];
  if (v === undefined) return undefined;
  const text = typeof v === 'string' ? v : typeof v === 'number' ? String(v) : null;
  const n = text === null ? null : key === 'cpu' ? parseCpuMillis(text) : parseMemoryBytes(text);
  if (text === null || n === null || n < 0) {
    addViolation(
      sink,
      join(path, key),
      'invalid_quantity',
      `invalid ${key} quantity ${show(v)} (examples: ${key === 'cpu' ? '"500m", "2"' : '"512Mi", "4Gi"'})`,
      { requested: v },
    );
    return undefined;
  }
  return { value: n, raw: text };
}

interface Gpu {
  count: number;
  type?: string;
  memoryGb?: number;
}

function readGpu(res: Record<string, unknown>, path: string, sink: Sink): Gpu | undefined {
  const g = readObject(res, 'gpu', path, sink);
  if (!g) return undefined;
  const gp = join(path, 'gpu');
  checkKeys(g, GPU_KEYS, gp, sink);
  const count = readInt(g, 'count', gp, sink) ?? 0;
  if (count < 0) {
    addViolation(sink, join(gp, 'count'), 'range', `gpu count must be >= 0, got ${count}`, {
      requested: count,
    });
  }
  const type = readString(g, 'type', gp, sink);
  const memoryGb = readInt(g, 'memoryGb', gp, sink);
  if (type !== undefined && memoryGb !== undefined) {
    addViolation(sink, gp, 'mutually_exclusive', 'select a GPU by type or by memoryGb, not both');
  }
  if (memoryGb !== undefined && memoryGb < 0) {
    addViolation(sink, join(gp, 'memoryGb'), 'range', `memoryGb must be >= 0, got ${memoryGb}`);
  }
  const out: Gpu = { count: Math.max(0, count) };
  if (type !== undefined) out.type = type;
  if (memoryGb !== undefined) out.memoryGb = memoryGb;
  return out;
}

function readSecurity(
  c: Record<string, unknown>,
  path: string,
  sink: Sink,
): ResolvedSecurityContext {
  const sc: ResolvedSecurityContext = {
    runAsUser: null,
    runAsGroup: null,
    privileged: false,
    allowPrivilegeEscalation: false,
    readOnlyRootFilesystem: false,
    capabilitiesAdd: [],
    capabilitiesDrop: [],
    seccompProfile: PLATFORM_DEFAULTS.seccompProfile,
  };
  const s = readObject(c, 'securityContext', path, sink);
  if (!s) return sc;
  const sp = join(path, 'securityContext');
  checkKeys(s, SECURITY_KEYS, sp, sink);
  for (const k of ['runAsUser', 'runAsGroup'] as const) {
    const id = readInt(s, k, sp, sink);
    if (id === undefined) continue;
    if (id < 0 || id > 4294967295) {
      addViolation(sink, join(sp, k), 'range', `${k} must be in 0..4294967295, got ${id}`, {
        requested: id,
      });
    } else sc[k] = id;
  }
  sc.privileged = readBool(s, 'privileged', sp, sink) ?? false;
  sc.allowPrivilegeEscalation = readBool(s, 'allowPrivilegeEscalation', sp, sink) ?? false;
  sc.readOnlyRootFilesystem = readBool(s, 'readOnlyRootFilesystem', sp, sink) ?? false;
  sc.capabilitiesAdd = readStringArray(s, 'capabilitiesAdd', sp, sink) ?? [];
  sc.capabilitiesDrop = readStringArray(s, 'capabilitiesDrop', sp, sink) ?? [];
  const seccomp = readString(s, 'seccompProfile', sp, sink);
  if (seccomp !== undefined && seccomp !== '') sc.seccompProfile = seccomp;
  return sc;
}

/** Reads one container and fills its defaults (cpu/memory from policy, then platform). */
function readContainer(
  v: unknown,
  path: string,
  implicitName: string | undefined,
  p: CompiledPolicy,
  sink: Sink,
): Work | undefined {
  if (!isObj(v)) {
    addViolation(sink, path, 'type', `expected a container object, got ${typeName(v)}`);
    return undefined;
  }
  checkKeys(v, CONTAINER_KEYS, path, sink);
  let name = readString(v, 'name', path, sink);
  if (name === undefined || name === '') {
    if (implicitName !== undefined) name = implicitName;
    else {
      addViolation(
        sink,
        join(path, 'name'),
        'required',
        'a container name is required when the sandbox has several containers',
      );
      name = '';
    }
  } else if (name.length > 253 || !DNS1123.test(name)) {
    addViolation(
      sink,
      join(path, 'name'),
      'invalid_name',
      `container name ${show(name)} must be a DNS-1123 name (lowercase letters, digits, '-', '.')`,
      { requested: name },
    );
  } else if (RESERVED_NAMES.has(name) || name.startsWith(RESERVED_PREFIX)) {
    addViolation(
      sink,
      join(path, 'name'),
      'reserved_name',
      `container name ${show(name)} is reserved by the platform`,
      { requested: name },
    );
  }
  const specImage = readString(v, 'image', path, sink);
  let command: string[] = [];
  const cmd = v.command;
  if (typeof cmd === 'string') command = cmd === '' ? [] : [cmd];
  else if (cmd !== undefined) command = readStringArray(v, 'command', path, sink) ?? [];
  const args = readStringArray(v, 'args', path, sink) ?? [];
  const env = readStringMap(v, 'environmentVariables', path, sink) ?? {};
  const workingDir = readString(v, 'workingDir', path, sink);
  if (workingDir !== undefined && workingDir !== '' && !workingDir.startsWith('/')) {
    addViolation(
      sink,
      join(path, 'workingDir'),
      'not_absolute',
      `workingDir must be an absolute path, got ${show(workingDir)}`,
    );
  }
  const primaryFlag = readBool(v, 'primary', path, sink);

  // Resources: `resources` (requests = limits) xor `resourceRequirements`.
  const cpu: Amount[] = [];
  const memory: Amount[] = [];
  let cpuLimitDeclared = false;
  let memoryLimitDeclared = false;
  let cpuReq: number | undefined;
  let cpuLim: number | undefined;
  let memReq: number | undefined;
  let memLim: number | undefined;
  let gpu: Gpu | undefined;
  let gpuPath = join(path, 'resources.gpu');
  const res = readObject(v, 'resources', path, sink);
  const rr = readObject(v, 'resourceRequirements', path, sink);
  if (res && rr) {
    addViolation(
      sink,
      join(path, 'resources'),
      'mutually_exclusive',
      'resources and resourceRequirements are mutually exclusive; use one',
    );
  }
  if (res) {
    const rp = join(path, 'resources');
    checkKeys(res, RESOURCES_KEYS, rp, sink);
    const c = readQuantity(res, 'cpu', rp, sink);
    const m = readQuantity(res, 'memory', rp, sink);
    if (c) {
      cpuReq = cpuLim = c.value;
      cpu.push({
        path: join(rp, 'cpu'),
        value: c.value,
        raw: c.raw,
        isRequest: true,
        source: 'spec',
      });
      cpuLimitDeclared = true;
    }
    if (m) {
      memReq = memLim = m.value;
      memory.push({
        path: join(rp, 'memory'),
        value: m.value,
        raw: m.raw,
        isRequest: true,
        source: 'spec',
      });
      memoryLimitDeclared = true;
    }
    gpu = readGpu(res, rp, sink);
  } else if (rr) {
    const rrp = join(path, 'resourceRequirements');
    checkKeys(rr, REQUIREMENTS_KEYS, rrp, sink);
    const req = readObject(rr, 'requests', rrp, sink);
    const lim = readObject(rr, 'limits', rrp, sink);
    if (req) {
      const qp = join(rrp, 'requests');
      checkKeys(req, RESOURCES_KEYS, qp, sink);
      const c = readQuantity(req, 'cpu', qp, sink);
      const m = readQuantity(req, 'memory', qp, sink);
      if (c) {
        cpuReq = c.value;
        cpu.push({
          path: join(qp, 'cpu'),
          value: c.value,
          raw: c.raw,
          isRequest: true,
          source: 'spec',
        });
      }
      if (m) {
        memReq = m.value;
        memory.push({
          path: join(qp, 'memory'),
          value: m.value,
          raw: m.raw,
          isRequest: true,
          source: 'spec',
        });
      }
      gpu = readGpu(req, qp, sink);
      if (gpu) gpuPath = join(qp, 'gpu');
    }
    if (lim) {
      const lp = join(rrp, 'limits');
      checkKeys(lim, RESOURCES_KEYS, lp, sink);
      const c = readQuantity(lim, 'cpu', lp, sink);
      const m = readQuantity(lim, 'memory', lp, sink);
      if (c) {
        cpuLim = c.value;
        // A limit alone also sets the request (Kubernetes semantics), so it is checked as one.
        cpu.push({
          path: join(lp, 'cpu'),
          value: c.value,
          raw: c.raw,
          isRequest: cpuReq === undefined,
          source: 'spec',
        });
        cpuLimitDeclared = true;
      }
      if (m) {
        memLim = m.value;
        memory.push({
          path: join(lp, 'memory'),
          value: m.value,
          raw: m.raw,
          isRequest: memReq === undefined,
          source: 'spec',
        });
        memoryLimitDeclared = true;
      }
      // GPU is not a burst dimension: taken from requests, or from limits when requests omit it.
      if (!gpu) {
        gpu = readGpu(lim, lp, sink);
        if (gpu) gpuPath = join(lp, 'gpu');
      } else if (lim.gpu !== undefined) readGpu(lim, lp, sink);
    }
    if (cpuReq !== undefined && cpuLim !== undefined && cpuLim < cpuReq) {
      addViolation(
        sink,
        join(rrp, 'limits.cpu'),
        'range',
        `limit ${formatCpu(cpuLim)} is below the request ${formatCpu(cpuReq)}`,
        { requested: cpuLim, limit: cpuReq },
      );
    }
    if (memReq !== undefined && memLim !== undefined && memLim < memReq) {
      addViolation(
        sink,
        join(rrp, 'limits.memory'),
        'range',
        `limit ${formatMemory(memLim)} is below the request ${formatMemory(memReq)}`,
        { requested: memLim, limit: memReq },
      );
    }
  }
  let cpuSource: ValueSource = 'spec';
  let memSource: ValueSource = 'spec';
  if (cpuReq === undefined && cpuLim === undefined) {
    const d = defaultAmount(join(path, 'resources.cpu'), p.defaultCpu, p.raw.defaultCpu, PLATFORM_DEFAULTS.cpuMillis, formatCpu);
    cpuReq = cpuLim = d.value;
    cpuSource = d.source;
    if (d.source === 'policy') cpuLimitDeclared = true;
    cpu.push(d);
  }
  if (memReq === undefined && memLim === undefined) {
    const d = defaultAmount(join(path, 'resources.memory'), p.defaultMemory, p.raw.defaultMemory, PLATFORM_DEFAULTS.memoryBytes, formatMemory);
    memReq = memLim = d.value;
    memSource = d.source;
    if (d.source === 'policy') memoryLimitDeclared = true;
    memory.push(d);
  }
  const finalCpuReq = cpuReq ?? cpuLim ?? 0;
  const finalMemReq = memReq ?? memLim ?? 0;
  const requests = {
    cpuMillis: finalCpuReq,
    memoryBytes: finalMemReq,
    gpuCount: gpu?.count ?? 0,
  } as ResolvedContainer['resources']['requests'];
  const limits = {
    cpuMillis: cpuLim ?? finalCpuReq,
    memoryBytes: memLim ?? finalMemReq,
    gpuCount: gpu?.count ?? 0,
  } as ResolvedContainer['resources']['limits'];
  if (gpu?.type !== undefined) requests.gpuType = limits.gpuType = gpu.type;
  if (gpu?.memoryGb !== undefined) requests.gpuMemoryGb = limits.gpuMemoryGb = gpu.memoryGb;

  const files: ResolvedContainer['files'] = [];
  const rawFiles = readArray(v, 'files', path, sink, 1024);
  if (rawFiles) {
    for (let i = 0; i < rawFiles.length; i++) {
      const f: unknown = rawFiles[i];
      const fp = idx(join(path, 'files'), i);
      if (!isObj(f)) {
        addViolation(sink, fp, 'type', `expected {path, content}, got ${typeName(f)}`);
        continue;
      }
      checkKeys(f, FILE_KEYS, fp, sink);
      const fpath = readString(f, 'path', fp, sink);
      const content = readString(f, 'content', fp, sink) ?? '';
      if (fpath === undefined) {
        addViolation(sink, join(fp, 'path'), 'required', 'a file path is required');
      } else if (!fpath.startsWith('/')) {
        addViolation(
          sink,
          join(fp, 'path'),
          'not_absolute',
          `file path must be absolute (including the file name), got ${show(fpath)}`,
        );
      }
      if (!BASE64.test(content)) {
        addViolation(
          sink,
          join(fp, 'content'),
          'invalid_base64',
          'content must be base64-encoded bytes',
        );
      }
      if (fpath !== undefined) files.push({ path: fpath, content });
    }
  }
  const volumeMounts: ResolvedContainer['volumeMounts'] = [];
  const rawMounts = readArray(v, 'volumeMounts', path, sink, 256);
  if (rawMounts) {
    for (let i = 0; i < rawMounts.length; i++) {
      const m: unknown = rawMounts[i];
      const mp = idx(join(path, 'volumeMounts'), i);
      if (!isObj(m)) {
        addViolation(sink, mp, 'type', `expected a volume mount object, got ${typeName(m)}`);
        continue;
      }
      checkKeys(m, MOUNT_KEYS, mp, sink);
      const volume = readString(m, 'volume', mp, sink);
      const mountPath = readString(m, 'mountPath', mp, sink);
      const subPath = readString(m, 'subPath', mp, sink);
      if (volume === undefined) {
        addViolation(sink, join(mp, 'volume'), 'required', 'the volume name is required');
      }
      if (mountPath === undefined) {
        addViolation(sink, join(mp, 'mountPath'), 'required', 'mountPath is required');
      } else if (!mountPath.startsWith('/')) {
        addViolation(
          sink,
          join(mp, 'mountPath'),
          'not_absolute',
          `mountPath must be absolute, got ${show(mountPath)}`,
        );
      }
      if (
        subPath !== undefined &&
        subPath !== '' &&
        (subPath.startsWith('/') ||
          subPath.split('/').some((s) => s === '..' || s === '.' || s === ''))
      ) {
        addViolation(
          sink,
          join(mp, 'subPath'),
          'invalid_value',
          `subPath must be relative and canonical (no ".", ".." or empty segments), got ${show(subPath)}`,
        );
      }
      if (volume !== undefined && mountPath !== undefined) {
        volumeMounts.push({
          volume,
          mountPath,
          readOnly: readBool(m, 'readOnly', mp, sink) ?? false,
          subPath: subPath || null,
        });
      }
    }
  }
  const passthrough: Record<string, unknown> = {};
  for (const k of PASSTHROUGH_CONTAINER_KEYS) if (v[k] !== undefined) passthrough[k] = v[k];

  const out: ResolvedContainer = {
    name,
    image: specImage !== undefined && specImage !== '' ? specImage : PLATFORM_DEFAULTS.image,
    imageSource: specImage ? 'spec' : 'platform',
    command,
    args,
    env,
    workingDir: workingDir || null,
    primary: false,
    resources: { requests, limits },
    resourceSources: { cpu: cpuSource, memory: memSource },
    securityContext: readSecurity(v, path, sink),
    files,
    volumeMounts,
    passthrough,
  };
  return {
    path,
    out,
    cpu,
    memory,
    cpuLimitDeclared,
    memoryLimitDeclared,
    gpuPath,
    primaryFlag,
    specImage: !!specImage,
  };
}

function readContainers(
  spec: Record<string, unknown>,
  key: 'containers' | 'initContainers',
  p: CompiledPolicy,
  sink: Sink,
): Work[] {
  const raw = spec[key];
  if (raw === undefined) {
    if (key === 'initContainers') return [];
    const w = readContainer({}, 'containers[0]', PLATFORM_DEFAULTS.containerName, p, sink);
    return w ? [w] : [];
  }
  const list = readArray(spec, key, '', sink, SPEC_LIMITS.maxContainers);
  if (!list) return [];
  if (list.length === 0 && key === 'containers') {
    addViolation(
      sink,
      'containers',
      'required',
      'a sandbox needs at least one container (omit the field to get the default one)',
    );
    return [];
  }
  const out: Work[] = [];
  for (let i = 0; i < list.length; i++) {
    const implicit =
      key === 'containers' && list.length === 1 ? PLATFORM_DEFAULTS.containerName : undefined;
    const w = readContainer(list[i], idx(key, i), implicit, p, sink);
    if (w) out.push(w);
  }
  return out;
}

interface VolumeWork {
  out: ResolvedVolume;
  path: string;
  percent?: number;
  sizeRaw?: string;
}

function readVolumes(spec: Record<string, unknown>, sink: Sink): VolumeWork[] {
  const list = readArray(spec, 'volumes', '', sink, SPEC_LIMITS.maxVolumes);
  if (!list) return [];
  const out: VolumeWork[] = [];
  const names = new Set<string>();
  for (let i = 0; i < list.length; i++) {
    const v: unknown = list[i];
    const vp = idx('volumes', i);
    if (!isObj(v)) {
      addViolation(sink, vp, 'type', `expected a volume object, got ${typeName(v)}`);
      continue;
    }
    checkKeys(v, VOLUME_KEYS, vp, sink);
    const name = readString(v, 'name', vp, sink);
    if (name === undefined || name === '') {
      addViolation(sink, join(vp, 'name'), 'required', 'a volume name is required');
      continue;
    }
    if (name.length > 63 || !DNS1123.test(name)) {
      addViolation(
        sink,
        join(vp, 'name'),
        'invalid_name',
        `volume name ${show(name)} must be a DNS-1123 label`,
      );
    }
    if (names.has(name)) {
      addViolation(sink, join(vp, 'name'), 'duplicate', `volume name ${show(name)} is used twice`);
    }
    names.add(name);
    const volumeId = readString(v, 'volumeId', vp, sink);
    const scratch = readObject(v, 'scratch', vp, sink);
    if (volumeId !== undefined && scratch !== undefined) {
      addViolation(sink, vp, 'mutually_exclusive', 'a volume has one source: scratch or volumeId');
    }
    if (volumeId !== undefined && scratch === undefined) {
      out.push({
        path: vp,
        out: {
          name,
          kind: 'registered',
          medium: 'STORAGE_MEDIUM_DISK',
          sizeBytes: null,
          sizeSource: 'spec',
          volumeId,
          restoreFromSnapshotId: null,
        },
      });
      continue;
    }
    const sp = join(vp, 'scratch');
    const s = scratch ?? {};
    checkKeys(s, SCRATCH_KEYS, sp, sink);
    const mediumRaw = readString(s, 'medium', sp, sink);
    if (mediumRaw !== undefined && !MEDIA.has(mediumRaw)) {
      addViolation(
        sink,
        join(sp, 'medium'),
        'invalid_enum',
        `must be one of ${[...MEDIA].join(', ')}, got ${show(mediumRaw)}`,
      );
    }
    const medium =
      mediumRaw === 'STORAGE_MEDIUM_MEMORY' ? 'STORAGE_MEDIUM_MEMORY' : 'STORAGE_MEDIUM_DISK';
    const restore = readString(s, 'restoreFromSnapshotId', sp, sink);
    const w: VolumeWork = {
      path: vp,
      out: {
        name,
        kind: 'scratch',
        medium,
        sizeBytes: PLATFORM_DEFAULTS.scratchSizeBytes,
        sizeSource: 'platform',
        volumeId: null,
        restoreFromSnapshotId: restore || null,
      },
    };
    const size = s.size;
    if (size === undefined) {
      if (medium === 'STORAGE_MEDIUM_MEMORY') {
        addViolation(
          sink,
          join(sp, 'size'),
          'required',
          'a MEMORY scratch volume must declare its size',
        );
      }
    } else if (typeof size === 'string' && size.endsWith('%')) {
      const pct = /^([1-9]\d?|100)%$/.exec(size);
      if (medium !== 'STORAGE_MEDIUM_MEMORY') {
        addViolation(
          sink,
          join(sp, 'size'),
          'invalid_value',
          'a percent size is valid only for a MEMORY volume',
        );
      } else if (!pct) {
        addViolation(
          sink,
          join(sp, 'size'),
          'range',
          `a percent size must be 1%..100%, got ${show(size)}`,
        );
      } else {
        w.percent = Number(pct[1]);
        w.out.sizeSource = 'spec';
        w.sizeRaw = size;
      }
    } else {
      const sizeText =
        typeof size === 'string' ? size : typeof size === 'number' ? String(size) : null;
      const bytes = sizeText === null ? null : parseMemoryBytes(sizeText);
      if (bytes === null || bytes <= 0) {
        addViolation(
          sink,
          join(sp, 'size'),
          'invalid_quantity',
          `invalid volume size ${show(size)} (example: "10Gi")`,
          { requested: size },
        );
      } else {
        w.out.sizeBytes = bytes;
        w.out.sizeSource = 'spec';
        w.sizeRaw = sizeText ?? '';
      }
    }
    out.push(w);
  }
  return out;
}

/** Reads `network`: declared rules (invalid ones kept as placeholders so indexes stay aligned). */
function readNetwork(
  spec: Record<string, unknown>,
  sink: Sink,
): {
  egress: NormRule[];
  ingress: NormRule[];
  denyEgress: boolean;
  denyIngress: boolean;
  declaredEgress: boolean;
  declaredIngress: boolean;
} {
  const n = readObject(spec, 'network', '', sink);
  const res = {
    egress: [] as NormRule[],
    ingress: [] as NormRule[],
    denyEgress: false,
    denyIngress: false,
    declaredEgress: false,
    declaredIngress: false,
  };
  if (!n) return res;
  checkKeys(n, NETWORK_KEYS, 'network', sink);
  res.denyEgress = readBool(n, 'denyEgress', 'network', sink) ?? false;
  res.denyIngress = readBool(n, 'denyIngress', 'network', sink) ?? false;
  const dns = readString(n, 'dnsEgress', 'network', sink);
  if (dns !== undefined && !DNS_MODES.has(dns)) {
    addViolation(
      sink,
      'network.dnsEgress',
      'invalid_enum',
      `must be one of ${[...DNS_MODES].join(', ')}`,
    );
  }
  const eg = readArray(n, 'egress', 'network', sink, SPEC_LIMITS.maxRules);
  if (eg) {
    res.declaredEgress = eg.length > 0;
    if (res.denyEgress && eg.length > 0) {
      addViolation(
        sink,
        'network.denyEgress',
        'deny_egress_with_rules',
        'denyEgress cannot be combined with egress rules; drop one of them',
      );
    }
    for (let i = 0; i < eg.length; i++) {
      const r = checkRule(eg[i], idx('network.egress', i), 'sandbox', sink);
      if (r) res.egress.push(r);
      else res.egress.push(INVALID_RULE);
    }
  }
  const ing = readArray(n, 'ingress', 'network', sink, SPEC_LIMITS.maxRules);
  if (ing) {
    res.declaredIngress = ing.length > 0;
    for (let i = 0; i < ing.length; i++) {
      const r = checkRule(ing[i], idx('network.ingress', i), 'sandboxIngress', sink);
      res.ingress.push(r ?? INVALID_RULE);
    }
  }
  return res;
}

/** Placeholder keeping rule indexes aligned when a declared rule was invalid (already reported). */
const INVALID_RULE: NormRule = { kind: 'any', except: [], hostExcept: [], ports: [], rule: {} };

export function resolveSandboxSpec(input: ResolveInput): ResolveResult {
  try {
    return resolveUnsafe(input);
  } catch (e) {
    // Defence in depth: an engine bug must surface as a named violation, never as an exception.
    return {
      ok: false,
      violations: [
        {
          field: 'spec',
          rule: 'internal_error',
          description: `spec could not be resolved: ${e instanceof Error ? e.message : String(e)}`,
        },
      ],
    };
  }
}

function resolveUnsafe(input: ResolveInput): ResolveResult {
  const compiled = compilePolicy(input.policy);
  if (!compiled.ok) return { ok: false, violations: compiled.violations };
  const p = compiled.compiled;
  const caps = input.capabilities ?? FULL_CAPABILITIES;
  const spec = input.spec;
  const sink: Sink = [];
  if (!isObj(spec)) {
    addViolation(
      sink,
      'spec',
      'type',
      `the sandbox spec must be a JSON object, got ${typeName(spec)}`,
    );
    return { ok: false, violations: sink };
  }
  checkKeys(spec, TOP_KEYS, '', sink);

  // ---- containers, defaults --------------------------------------------------------------------
  const containers = readContainers(spec, 'containers', p, sink);
  const inits = readContainers(spec, 'initContainers', p, sink);
  // A container naming no image gets the runner's own default image when it advertises one (the
  // local backend's built-in image), else the platform default; the image checks below see it.
  if (caps.defaultImage) {
    for (const w of containers.concat(inits)) {
      if (w.out.imageSource === 'platform') w.out.image = caps.defaultImage;
    }
  }
  const all = inits.length ? containers.concat(inits) : containers;
  const names = new Set<string>();
  for (const w of all) {
    if (!w.out.name) continue;
    if (names.has(w.out.name)) {
      addViolation(
        sink,
        join(w.path, 'name'),
        'duplicate',
        `container name ${show(w.out.name)} is used twice`,
      );
    }
    names.add(w.out.name);
  }
  const primaryContainer = resolvePrimary(spec, containers, sink);
  const volumes = readVolumes(spec, sink);
  const volumeNames = new Set(volumes.map((v) => v.out.name));
  for (const w of all) {
    w.out.volumeMounts.forEach((m, i) => {
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

  // ---- lifetime ---------------------------------------------------------------------------------
  const requestedLifetime = readInt(spec, 'maxLifetimeSeconds', '', sink);
  let lifetimeSeconds = FALLBACK_LIFETIME_SECONDS;
  let lifetimeSource: ValueSource = 'platform';
  if (requestedLifetime !== undefined && requestedLifetime < 0) {
    addViolation(
      sink,
      'maxLifetimeSeconds',
      'range',
      `must be >= 0 (0 = platform default), got ${requestedLifetime}`,
      { requested: requestedLifetime },
    );
  } else if (requestedLifetime !== undefined && requestedLifetime > MAX_LIFETIME_SECONDS) {
    addViolation(
      sink,
      'maxLifetimeSeconds',
      'max_lifetime',
      `requested ${requestedLifetime} exceeds the platform maximum ${MAX_LIFETIME_SECONDS} (30 days)`,
      { requested: requestedLifetime, limit: MAX_LIFETIME_SECONDS },
    );
  } else if (requestedLifetime !== undefined && requestedLifetime > 0) {
    lifetimeSeconds = requestedLifetime;
    lifetimeSource = 'spec';
  } else if (p.defaultLifetime > 0) {
    lifetimeSeconds = p.defaultLifetime;
    lifetimeSource = 'policy';
  }

  // ---- metadata, placement fields -------------------------------------------------------------
  const annotations = readStringMap(spec, 'annotations', '', sink) ?? {};
  const tags = readStringArray(spec, 'tags', '', sink) ?? [];
  const networkIds = readStringArray(spec, 'networkIds', '', sink) ?? [];
  const runnerIds = readStringArray(spec, 'runnerIds', '', sink) ?? [];
  const instanceType = readString(spec, 'instanceType', '', sink) || null;
  const modeRaw = readString(spec, 'mode', '', sink);
  if (modeRaw !== undefined && !MODES.has(modeRaw)) {
    addViolation(
      sink,
      'mode',
      'invalid_enum',
      `must be one of ${SANDBOX_MODES.join(', ')}, got ${show(modeRaw)}`,
    );
  }
  const mode: SandboxMode =
    modeRaw !== undefined && MODES.has(modeRaw)
      ? (modeRaw as SandboxMode)
      : 'SANDBOX_MODE_UNSPECIFIED';
  checkRunnerIds(runnerIds, mode, sink);
  const pin = readString(spec, 'runtimeClass', '', sink) || undefined;
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
  const objectStorageAccess = readObject(spec, 'objectStorageAccess', '', sink) ?? null;

  // ---- network ----------------------------------------------------------------------------------
  const net = readNetwork(spec, sink);
  const egress = resolveEgress(net, p, caps);
  const ingress = resolveIngress(net, p);

  // ---- runtime class ----------------------------------------------------------------------------
  const hasGpu = containers.some((w) => w.out.resources.requests.gpuCount > 0);
  let runtimeClass: string | null = null;
  let runtimeClassSource: ResolvedSandboxSpec['runtimeClassSource'] = 'runner';
  if (pin !== undefined) {
    runtimeClass = pin;
    runtimeClassSource = 'pin';
  } else {
    const d = hasGpu ? p.defaultGpuRuntimeClass : p.defaultCpuRuntimeClass;
    if (d) {
      runtimeClass = d;
      runtimeClassSource = 'policy-default';
    }
  }

  // ---- constraints (only if the request itself is well-formed) ------------------------------------
  const totals = sumRequests(containers, inits, p);
  checkResourceConstraints(all, totals, volumes, p, caps, sink);
  checkSecurityAndImages(all, p, caps, sink);
  checkNetworkConstraints(net, egress, ingress, p, caps, sink);
  checkRuntimeClass(pin, runtimeClass, runtimeClassSource, p, caps, sink);
  checkMetadataAndPlacement(annotations, instanceType, p, caps, sink);
  checkVolumes(volumes, p, caps, sink);

  if (sink.length) return { ok: false, violations: sortViolations(sink) };

  const resolvedContainers = containers.map((w) => w.out);
  for (const c of resolvedContainers) c.primary = c.name === primaryContainer;
  const effectiveRuntimeClass = runtimeClass ?? '<node-default>';
  const resolved: ResolvedSandboxSpec = {
    containers: resolvedContainers,
    initContainers: inits.map((w) => w.out),
    primaryContainer,
    volumes: volumes.map((v) => v.out),
    services,
    lifetimeSeconds,
    lifetimeSource,
    runtimeClass,
    runtimeClassSource,
    egress,
    ingress,
    // Admin-pinned pod metadata wins over the sandbox's annotation on a key collision.
    annotations: mergeAnnotations(annotations, p.base.annotations),
    tags,
    runnerIds,
    networkIds,
    instanceType,
    mode,
    objectStorageAccess,
    baseAttachments: p.base,
    effectiveResources: {
      cpu: formatCpu(totals.cpu),
      memory: formatMemory(totals.memory),
      gpuCount: totals.gpu,
    },
    effectiveResourceRequirements: resolvedContainers.map((c) => ({
      container: c.name,
      requests: {
        cpu: formatCpu(c.resources.requests.cpuMillis),
        memory: formatMemory(c.resources.requests.memoryBytes),
        gpuCount: c.resources.requests.gpuCount,
      },
      limits: {
        cpu: formatCpu(c.resources.limits.cpuMillis),
        memory: formatMemory(c.resources.limits.memoryBytes),
        gpuCount: c.resources.limits.gpuCount,
      },
    })),
    effectiveMaxLifetimeSeconds: lifetimeSeconds,
    effectiveEgress: egress,
    effectiveIngress: ingress,
    effectiveRuntimeClass,
  };
  return { ok: true, resolved };
}

/** Sandbox annotations overlaid with the admin-pinned ones (plain loops: object spread of these
 * maps was measured at ~8% of a resolution). */
function mergeAnnotations(
  own: Record<string, string>,
  pinned: Record<string, string>,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k in own) out[k] = own[k] as string;
  for (const k in pinned) out[k] = pinned[k] as string;
  return out;
}

function resolvePrimary(spec: Record<string, unknown>, containers: Work[], sink: Sink): string {
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
    if (!containers.some((w) => w.out.name === named)) {
      addViolation(
        sink,
        'primaryContainer',
        'unknown_container',
        `no container is named ${show(named)}`,
        { requested: named },
      );
    }
    if (flagged[0] && flagged[0].out.name !== named) {
      addViolation(
        sink,
        'primaryContainer',
        'invalid_value',
        `primaryContainer ${show(named)} disagrees with the container marked primary (${show(flagged[0].out.name)})`,
      );
    }
    return named;
  }
  if (flagged[0]) return flagged[0].out.name;
  if (containers.length === 1) return containers[0]?.out.name ?? PLATFORM_DEFAULTS.containerName;
  if (containers.length > 1) {
    addViolation(
      sink,
      'primaryContainer',
      'required',
      'primaryContainer is required when the sandbox has several containers',
    );
  }
  return containers[0]?.out.name ?? PLATFORM_DEFAULTS.containerName;
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

function resolveEgress(
  net: ReturnType<typeof readNetwork>,
  p: CompiledPolicy,
  caps: RunnerCapabilities,
): ResolvedEgress {
  if (net.denyEgress) return { denyAll: true, unrestricted: false, rules: [], source: 'deny' };
  if (net.declaredEgress) {
    return {
      denyAll: false,
      unrestricted: false,
      rules: net.egress.map((r) => r.rule),
      source: 'spec',
    };
  }
  if (p.defaultEgress.length) {
    return {
      denyAll: false,
      unrestricted: false,
      rules: p.defaultEgressRules as EgressRule[],
      source: 'policy-default',
    };
  }
  // Nothing requested, no policy default: the runner's own default, which for a runner that
  // cannot grant egress is deny-all (nothing was asked for, so nothing is narrowed).
  return caps.supportsEgress
    ? { denyAll: false, unrestricted: true, rules: [], source: 'runner-default' }
    : { denyAll: true, unrestricted: false, rules: [], source: 'runner-default' };
}

function resolveIngress(net: ReturnType<typeof readNetwork>, p: CompiledPolicy): ResolvedIngress {
  if (net.denyIngress) return { denyAll: true, unrestricted: false, rules: [], source: 'deny' };
  if (net.declaredIngress) {
    return {
      denyAll: false,
      unrestricted: false,
      rules: net.ingress.map((r) => r.rule as IngressRule),
      source: 'spec',
    };
  }
  if (p.defaultIngress.length) {
    return {
      denyAll: false,
      unrestricted: false,
      rules: p.defaultIngressRules as IngressRule[],
      source: 'policy-default',
    };
  }
  // Ingress is allow-only over default-deny on CUSTOM ports: no rule means no extra source.
  return { denyAll: false, unrestricted: false, rules: [], source: 'runner-default' };
}

function sumRequests(
  containers: Work[],
  inits: Work[],
  p: CompiledPolicy,
): { cpu: number; memory: number; gpu: number } {
  let cpu = 0;
  let memory = 0;
  let gpu = 0;
  for (const w of containers) {
    cpu += w.out.resources.requests.cpuMillis;
    memory += w.out.resources.requests.memoryBytes;
    gpu += w.out.resources.requests.gpuCount;
  }
  for (const s of p.base.containers) {
    cpu += s.cpuMillis;
    memory += s.memoryBytes;
  }
  // Init containers run before the others: the pod needs the larger of the two (Kubernetes rule).
  for (const w of inits) {
    cpu = Math.max(cpu, w.out.resources.requests.cpuMillis);
    memory = Math.max(memory, w.out.resources.requests.memoryBytes);
  }
  return { cpu, memory, gpu };
}

function checkResourceConstraints(
  all: Work[],
  totals: { cpu: number; memory: number },
  volumes: VolumeWork[],
  p: CompiledPolicy,
  caps: RunnerCapabilities,
  sink: Sink,
): void {
  for (const w of all) {
    for (const a of w.cpu) {
      if (p.maxCpu !== undefined && a.value > p.maxCpu) {
        addViolation(
          sink,
          a.path,
          'max_cpu',
          `requested ${a.raw}${via(a)} exceeds the policy maximum ${p.raw.maxCpu} (${CONSTRAINT.maxCpu})`,
          { requested: a.raw, limit: p.raw.maxCpu, constraint: CONSTRAINT.maxCpu },
        );
      }
      if (a.isRequest && p.minCpu !== undefined && a.value < p.minCpu) {
        addViolation(
          sink,
          a.path,
          'min_cpu',
          `requested ${a.raw}${via(a)} is below the policy minimum ${p.raw.minCpu} (${CONSTRAINT.minCpu})`,
          { requested: a.raw, limit: p.raw.minCpu, constraint: CONSTRAINT.minCpu },
        );
      }
    }
    for (const a of w.memory) {
      if (p.maxMemory !== undefined && a.value > p.maxMemory) {
        addViolation(
          sink,
          a.path,
          'max_memory',
          `requested ${a.raw}${via(a)} exceeds the policy maximum ${p.raw.maxMemory} (${CONSTRAINT.maxMemory})`,
          { requested: a.raw, limit: p.raw.maxMemory, constraint: CONSTRAINT.maxMemory },
        );
      }
      if (a.isRequest && p.minMemory !== undefined && a.value < p.minMemory) {
        addViolation(
          sink,
          a.path,
          'min_memory',
          `requested ${a.raw}${via(a)} is below the policy minimum ${p.raw.minMemory} (${CONSTRAINT.minMemory})`,
          { requested: a.raw, limit: p.raw.minMemory, constraint: CONSTRAINT.minMemory },
        );
      }
    }
    const gpus = w.out.resources.requests.gpuCount;
    if (p.maxGpuCount !== undefined && gpus > p.maxGpuCount) {
      const msg =
        p.maxGpuCount === 0
          ? `requested ${gpus} GPU(s) but the policy forbids GPUs (${CONSTRAINT.maxGpuCount} = 0)`
          : `requested ${gpus} exceeds the policy maximum ${p.maxGpuCount} (${CONSTRAINT.maxGpuCount})`;
      addViolation(sink, join(w.gpuPath, 'count'), 'max_gpu_count', msg, {
        requested: gpus,
        limit: p.maxGpuCount,
        constraint: CONSTRAINT.maxGpuCount,
      });
    }
    if (caps.maxGpuCount !== undefined && gpus > caps.maxGpuCount) {
      addViolation(
        sink,
        join(w.gpuPath, 'count'),
        'runner_capability',
        caps.maxGpuCount === 0
          ? `requested ${gpus} GPU(s) but the runner has no GPUs to attach; pick a GPU runner`
          : `requested ${gpus} GPU(s) but the runner attaches at most ${caps.maxGpuCount} per container`,
        { requested: gpus, limit: caps.maxGpuCount },
      );
    }
    const gpuType = w.out.resources.requests.gpuType;
    if (
      gpus > 0 &&
      gpuType !== undefined &&
      caps.gpuTypes.length > 0 &&
      !caps.gpuTypes.includes(gpuType)
    ) {
      addViolation(
        sink,
        join(w.gpuPath, 'type'),
        'runner_capability',
        `GPU type ${show(gpuType)} is not offered by the runner (offers ${caps.gpuTypes.join(', ')})`,
        { requested: gpuType, limit: caps.gpuTypes },
      );
    }
    if (p.requireLimits) {
      // Declared limits, or a policy default (which sets requests = limits), satisfy the rule; a
      // container relying on requests alone or on the platform fallback does not.
      if (!w.cpuLimitDeclared) {
        addViolation(
          sink,
          join(w.path, 'resourceRequirements.limits.cpu'),
          'require_limits',
          `the policy requires every container to declare cpu requests and limits (${CONSTRAINT.requireLimits})`,
          { constraint: CONSTRAINT.requireLimits },
        );
      }
      if (!w.memoryLimitDeclared) {
        addViolation(
          sink,
          join(w.path, 'resourceRequirements.limits.memory'),
          'require_limits',
          `the policy requires every container to declare memory requests and limits (${CONSTRAINT.requireLimits})`,
          { constraint: CONSTRAINT.requireLimits },
        );
      }
    }
  }
  let memoryWithTmpfs = totals.memory;
  for (const v of volumes) {
    if (v.out.medium !== 'STORAGE_MEDIUM_MEMORY' || v.out.kind !== 'scratch') continue;
    if (v.percent !== undefined) v.out.sizeBytes = Math.ceil((totals.memory * v.percent) / 100);
    memoryWithTmpfs += v.out.sizeBytes ?? 0;
  }
  if (p.cpuCeiling !== undefined && totals.cpu > p.cpuCeiling) {
    addViolation(
      sink,
      'containers',
      'cpu_ceiling',
      `the sandbox's total cpu request ${formatCpu(totals.cpu)} exceeds the policy ceiling ${p.raw.cpuCeiling} (${CONSTRAINT.cpuCeiling})`,
      {
        requested: formatCpu(totals.cpu),
        limit: p.raw.cpuCeiling,
        constraint: CONSTRAINT.cpuCeiling,
      },
    );
  }
  if (p.memoryCeiling !== undefined && memoryWithTmpfs > p.memoryCeiling) {
    addViolation(
      sink,
      'containers',
      'memory_ceiling',
      `the sandbox's total memory request ${formatMemory(memoryWithTmpfs)} (including MEMORY volumes) exceeds the policy ceiling ${p.raw.memoryCeiling} (${CONSTRAINT.memoryCeiling})`,
      {
        requested: formatMemory(memoryWithTmpfs),
        limit: p.raw.memoryCeiling,
        constraint: CONSTRAINT.memoryCeiling,
      },
    );
  }
  const capCpu = caps.maxCpu !== undefined ? parseCpuMillis(caps.maxCpu) : null;
  const capMem = caps.maxMemory !== undefined ? parseMemoryBytes(caps.maxMemory) : null;
  if (capCpu !== null && totals.cpu > capCpu) {
    addViolation(
      sink,
      'containers',
      'runner_capability',
      `the sandbox's total cpu request ${formatCpu(totals.cpu)} exceeds the largest sandbox the runner can host (${caps.maxCpu ?? ''})`,
      { requested: formatCpu(totals.cpu), limit: caps.maxCpu },
    );
  }
  if (capMem !== null && memoryWithTmpfs > capMem) {
    addViolation(
      sink,
      'containers',
      'runner_capability',
      `the sandbox's total memory request ${formatMemory(memoryWithTmpfs)} exceeds the largest sandbox the runner can host (${caps.maxMemory ?? ''})`,
      { requested: formatMemory(memoryWithTmpfs), limit: caps.maxMemory },
    );
  }
}

function checkSecurityAndImages(
  all: Work[],
  p: CompiledPolicy,
  caps: RunnerCapabilities,
  sink: Sink,
): void {
  for (const w of all) {
    const sc = w.out.securityContext;
    const sp = join(w.path, 'securityContext');
    if (sc.privileged) {
      if (!p.allowPrivileged) {
        addViolation(
          sink,
          join(sp, 'privileged'),
          'privileged_not_allowed',
          `privileged containers are not allowed by the policy (${CONSTRAINT.allowPrivileged})`,
          { requested: true, limit: false, constraint: CONSTRAINT.allowPrivileged },
        );
      }
      if (!caps.supportsPrivileged) {
        addViolation(
          sink,
          join(sp, 'privileged'),
          'runner_capability',
          'the runner cannot run privileged containers',
          { requested: true, limit: false },
        );
      }
    }
    if (sc.allowPrivilegeEscalation && !p.allowPrivileged) {
      addViolation(
        sink,
        join(sp, 'allowPrivilegeEscalation'),
        'privilege_escalation_not_allowed',
        `privilege escalation needs a policy that allows privileged containers (${CONSTRAINT.allowPrivileged})`,
        { requested: true, limit: false, constraint: CONSTRAINT.allowPrivileged },
      );
    }
    sc.capabilitiesAdd.forEach((cap, i) => {
      if (!p.allowedCapabilities.has(normCapability(cap))) {
        addViolation(
          sink,
          idx(join(sp, 'capabilitiesAdd'), i),
          'capability_not_allowed',
          `capability ${show(cap)} is not in the policy's allowed capabilities ${show([...p.allowedCapabilities])} (${CONSTRAINT.allowedCapabilities})`,
          {
            requested: cap,
            limit: [...p.allowedCapabilities],
            constraint: CONSTRAINT.allowedCapabilities,
          },
        );
      }
    });
    // Fail-closed: with no allowlist only the platform default profile is admitted.
    const seccompOk = p.allowedSeccomp.length
      ? p.allowedSeccomp.includes(sc.seccompProfile)
      : sc.seccompProfile === PLATFORM_DEFAULTS.seccompProfile;
    if (!seccompOk) {
      addViolation(
        sink,
        join(sp, 'seccompProfile'),
        'seccomp_profile_not_allowed',
        `seccomp profile ${show(sc.seccompProfile)} is not allowed (allowed: ${show(p.allowedSeccomp.length ? p.allowedSeccomp : [PLATFORM_DEFAULTS.seccompProfile])}) (${CONSTRAINT.allowedSeccomp})`,
        {
          requested: sc.seccompProfile,
          limit: p.allowedSeccomp.length ? p.allowedSeccomp : [PLATFORM_DEFAULTS.seccompProfile],
          constraint: CONSTRAINT.allowedSeccomp,
        },
      );
    }
    const image = w.out.image;
    const ip = join(w.path, 'image');
    const via = w.specImage ? '' : ' (the platform default image)';
    if (
      p.registries.length &&
      !memoized(p.memo.registries, image, () => imageAllowedByRegistries(image, p.registries))
    ) {
      addViolation(
        sink,
        ip,
        'allowed_registries',
        `image ${show(image)}${via} is not from an allowed registry ${show(p.registries)} (${CONSTRAINT.allowedRegistries})`,
        { requested: image, limit: p.registries, constraint: CONSTRAINT.allowedRegistries },
      );
    }
    if (
      p.images.length &&
      !memoized(p.memo.images, image, () => imageAllowedByList(image, p.images))
    ) {
      addViolation(
        sink,
        ip,
        'allowed_images',
        `image ${show(image)}${via} is not in the policy's allowed images ${show(p.images)} (${CONSTRAINT.allowedImages})`,
        { requested: image, limit: p.images, constraint: CONSTRAINT.allowedImages },
      );
    }
    if (caps.images.length && !caps.images.includes(image)) {
      addViolation(
        sink,
        ip,
        'runner_capability',
        `image ${show(image)}${via} is not available on the runner (available: ${caps.images.join(', ')})`,
        { requested: image, limit: caps.images },
      );
    }
  }
}

function checkNetworkConstraints(
  net: ReturnType<typeof readNetwork>,
  egress: ResolvedEgress,
  ingress: ResolvedIngress,
  p: CompiledPolicy,
  caps: RunnerCapabilities,
  sink: Sink,
): void {
  if (!egress.denyAll) {
    const fromSpec = egress.source === 'spec';
    const rules = fromSpec ? net.egress : egress.source === 'policy-default' ? p.defaultEgress : [];
    rules.forEach((r, i) => {
      if (r === INVALID_RULE) return;
      const rp = fromSpec ? idx('network.egress', i) : 'network.egress';
      const origin = fromSpec ? '' : ' (from the policy defaultEgress)';
      if (r.kind === 'httpsHostname' && p.denyHostnames) {
        addViolation(
          sink,
          join(rp, 'httpsHostname'),
          'https_hostname_denied',
          `the policy forbids httpsHostname egress grants (${CONSTRAINT.denyHostnames})`,
          { requested: r.host, constraint: CONSTRAINT.denyHostnames },
        );
      } else if (
        fromSpec &&
        p.allowedEgress.length &&
        !memoized(p.memo.egress, ruleKey(r), () => ruleContained(r, p.allowedEgress))
      ) {
        addViolation(
          sink,
          rp,
          'egress_not_allowed',
          `egress ${describeRule(r)}${portsText(r)} is not inside the policy's allowed egress (${CONSTRAINT.allowedEgress})`,
          {
            requested: r.rule,
            limit: p.allowedEgress.map((a) => a.rule),
            constraint: CONSTRAINT.allowedEgress,
          },
        );
      }
      if (!caps.egressRuleKinds.includes(r.kind)) {
        addViolation(
          sink,
          rp,
          'runner_capability',
          `the runner cannot enforce ${r.kind} egress rules${origin} (it enforces: ${caps.egressRuleKinds.join(', ') || 'none'})`,
          { requested: r.kind, limit: caps.egressRuleKinds },
        );
      }
    });
    if (!caps.supportsEgress && (egress.rules.length > 0 || egress.unrestricted)) {
      addViolation(
        sink,
        fromSpec ? 'network.egress' : 'network.denyEgress',
        'runner_capability',
        `the runner cannot grant egress${fromSpec ? '' : ' (the policy defaultEgress needs it)'}; set network.denyEgress or pick another runner`,
        { requested: egress.source, limit: 'deny-all' },
      );
    }
  }
  if (!ingress.denyAll) {
    const fromSpec = ingress.source === 'spec';
    const rules = fromSpec
      ? net.ingress
      : ingress.source === 'policy-default'
        ? p.defaultIngress
        : [];
    rules.forEach((r, i) => {
      if (r === INVALID_RULE) return;
      const rp = fromSpec ? idx('network.ingress', i) : 'network.ingress';
      if (
        fromSpec &&
        p.allowedIngress.length &&
        !memoized(p.memo.ingress, ruleKey(r), () => ruleContained(r, p.allowedIngress))
      ) {
        addViolation(
          sink,
          rp,
          'ingress_not_allowed',
          `ingress ${describeRule(r)}${portsText(r)} is not inside the policy's allowed ingress (${CONSTRAINT.allowedIngress})`,
          {
            requested: r.rule,
            limit: p.allowedIngress.map((a) => a.rule),
            constraint: CONSTRAINT.allowedIngress,
          },
        );
      }
      if (!(caps.ingressRuleKinds as string[]).includes(r.kind)) {
        addViolation(
          sink,
          rp,
          'runner_capability',
          `the runner cannot enforce ${r.kind} ingress rules (it enforces: ${caps.ingressRuleKinds.join(', ') || 'none'})`,
          { requested: r.kind, limit: caps.ingressRuleKinds },
        );
      }
    });
  }
}

function portsText(r: NormRule): string {
  if (r.ports.length === 0) return '';
  return ` ports ${r.ports.map((p) => `${p.protocol}/${p.lo}${p.hi !== p.lo ? `-${p.hi}` : ''}`).join(',')}`;
}

function checkRuntimeClass(
  pin: string | undefined,
  rc: string | null,
  source: ResolvedSandboxSpec['runtimeClassSource'],
  p: CompiledPolicy,
  caps: RunnerCapabilities,
  sink: Sink,
): void {
  if (pin !== undefined) {
    if (p.allowedRuntimeClasses.length === 0) {
      addViolation(
        sink,
        'runtimeClass',
        'runtime_class_not_allowed',
        `the policy has no allowedRuntimeClasses, so a sandbox cannot pin a runtime class; omit runtimeClass to use the default (${CONSTRAINT.allowedRuntimeClasses})`,
        {
          requested: pin,
          limit: [],
          constraint: CONSTRAINT.allowedRuntimeClasses,
        },
      );
    } else if (!p.allowedRuntimeClasses.includes(pin)) {
      addViolation(
        sink,
        'runtimeClass',
        'runtime_class_not_allowed',
        `runtime class ${show(pin)} is not in the policy's allowed runtime classes ${show(p.allowedRuntimeClasses)} (${CONSTRAINT.allowedRuntimeClasses})`,
        {
          requested: pin,
          limit: p.allowedRuntimeClasses,
          constraint: CONSTRAINT.allowedRuntimeClasses,
        },
      );
    }
  }
  if (rc === null) return;
  const origin = source === 'pin' ? '' : ' (the policy default)';
  if (caps.isolation === 'namespaces') {
    addViolation(
      sink,
      'runtimeClass',
      'runner_capability',
      `runtime class ${show(rc)}${origin} cannot be applied: the runner isolates with namespaces, not runtime classes`,
      { requested: rc, limit: caps.isolation },
    );
  } else if (caps.runtimeClasses.length > 0 && !caps.runtimeClasses.includes(rc)) {
    addViolation(
      sink,
      'runtimeClass',
      'runner_capability',
      `runtime class ${show(rc)}${origin} is not offered by the runner (offers ${caps.runtimeClasses.join(', ')})`,
      { requested: rc, limit: caps.runtimeClasses },
    );
  }
}

function checkMetadataAndPlacement(
  annotations: Record<string, string>,
  instanceType: string | null,
  p: CompiledPolicy,
  caps: RunnerCapabilities,
  sink: Sink,
): void {
  const keys = Object.keys(annotations).sort();
  if (keys.length > SPEC_LIMITS.maxAnnotations) {
    addViolation(
      sink,
      'annotations',
      'max_items',
      `at most ${SPEC_LIMITS.maxAnnotations} annotations`,
      { requested: keys.length, limit: SPEC_LIMITS.maxAnnotations },
    );
  }
  if (p.maxAnnotations > 0 && keys.length > p.maxAnnotations) {
    addViolation(
      sink,
      'annotations',
      'max_annotation_count',
      `requested ${keys.length} annotations exceeds the policy maximum ${p.maxAnnotations} (${CONSTRAINT.maxAnnotations})`,
      { requested: keys.length, limit: p.maxAnnotations, constraint: CONSTRAINT.maxAnnotations },
    );
  }
  if (p.deniedPrefixes.length) {
    for (const k of keys) {
      const hit = p.deniedPrefixes.find((pre) => k.startsWith(pre));
      if (hit !== undefined) {
        addViolation(
          sink,
          mapKey('annotations', k),
          'denied_annotation_prefix',
          `annotation key ${show(k)} uses the denied prefix ${show(hit)} (${CONSTRAINT.deniedPrefixes})`,
          { requested: k, limit: hit, constraint: CONSTRAINT.deniedPrefixes },
        );
      }
    }
  }
  if (instanceType !== null) {
    if (p.instanceTypes.length && !p.instanceTypes.includes(instanceType)) {
      addViolation(
        sink,
        'instanceType',
        'instance_type_not_allowed',
        `instance type ${show(instanceType)} is not in the policy's allowed instance types ${show(p.instanceTypes)} (${CONSTRAINT.allowedInstanceTypes})`,
        {
          requested: instanceType,
          limit: p.instanceTypes,
          constraint: CONSTRAINT.allowedInstanceTypes,
        },
      );
    }
    if (caps.instanceTypes.length && !caps.instanceTypes.includes(instanceType)) {
      addViolation(
        sink,
        'instanceType',
        'runner_capability',
        `instance type ${show(instanceType)} is not offered by the runner (offers ${caps.instanceTypes.join(', ')})`,
        { requested: instanceType, limit: caps.instanceTypes },
      );
    }
  }
}

function checkVolumes(
  volumes: VolumeWork[],
  p: CompiledPolicy,
  caps: RunnerCapabilities,
  sink: Sink,
): void {
  for (const v of volumes) {
    if (v.out.kind !== 'scratch') continue;
    const medium = v.out.medium;
    const mp = join(v.path, 'scratch.medium');
    if (p.media.length && !p.media.includes(medium)) {
      addViolation(
        sink,
        mp,
        'volume_medium_not_allowed',
        `storage medium ${medium} is not allowed by the policy ${show(p.media)} (${CONSTRAINT.allowedMedia})`,
        { requested: medium, limit: p.media, constraint: CONSTRAINT.allowedMedia },
      );
    }
    if (!caps.storageMedia.includes(medium)) {
      addViolation(sink, mp, 'runner_capability', `the runner does not offer ${medium} volumes`, {
        requested: medium,
        limit: caps.storageMedia,
      });
    }
    const size = v.out.sizeBytes;
    if (p.maxVolumeBytes !== undefined && size !== null && size > p.maxVolumeBytes) {
      const shown = v.sizeRaw ?? `${formatMemory(size)} (the platform default size)`;
      addViolation(
        sink,
        join(v.path, 'scratch.size'),
        'volume_max_size',
        `requested ${shown} exceeds the policy maximum ${String(p.policy.constraints?.volumes?.maxSize)} (${CONSTRAINT.maxSize})`,
        {
          requested: v.sizeRaw ?? formatMemory(size),
          limit: p.policy.constraints?.volumes?.maxSize,
          constraint: CONSTRAINT.maxSize,
        },
      );
    }
  }
}

export type { EgressRule };
