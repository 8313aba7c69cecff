import type { ResolvedContainer, ResolvedSecurityContext } from '@paddock/contracts';
import * as m_defaults from '../defaults';
import { type Dimension, type DimensionRead } from '../dimensions';
import * as m_dimensions from '../dimensions';
import * as m_network from '../network';
import * as m_spec_reader from '../spec-reader';
import { type Sink } from '../violations';
import * as m_violations from '../violations';
import * as m_fields from './fields';

// Hot-path helpers bound once: transpilers (tsx/esbuild) turn imported names into getter
// calls on every use, which cost ~10% of a resolution. Locals are plain calls.
const { PLATFORM_DEFAULTS, SPEC_LIMITS } = m_defaults;
const { CPU, MEMORY } = m_dimensions;
const { isObj } = m_network;
const {
  checkKeys,
  readArray,
  readBool,
  readInt,
  readObject,
  readRecordList,
  readString,
  readStringArray,
  readStringMap,
} = m_spec_reader;
const { addViolation, idx, join, show, typeName } = m_violations;
const { CONTAINER, FILE, GPU, MOUNT, RESOURCES, REQUIREMENTS, SECURITY } = m_fields;

/** DNS-1123 subdomain: labels of `[a-z0-9]([-a-z0-9]*[a-z0-9])?` separated by dots, <= 253 chars. */
export const DNS1123 = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const RESERVED_NAMES = new Set([
  'cw-object-store-agent',
  'cw-object-store-agent-restore',
  'dns-egress',
  'dns-egress-probe',
]);
const RESERVED_PREFIX = 'cw-object-store-agent-restore-';
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

export interface Gpu {
  count: number;
  type?: string;
  memoryGb?: number;
}

/** One container as the request wrote it (checked, nothing defaulted yet). */
export interface ContainerRead {
  path: string;
  name: string;
  /** The image the request named (undefined or '' = a default applies). */
  image: string | undefined;
  command: string[];
  args: string[];
  env: Record<string, string>;
  workingDir: string | null;
  primaryFlag: boolean | undefined;
  cpu: DimensionRead;
  memory: DimensionRead;
  gpu: Gpu | undefined;
  gpuPath: string;
  securityContext: ResolvedSecurityContext;
  files: ResolvedContainer['files'];
  volumeMounts: ResolvedContainer['volumeMounts'];
  passthrough: Record<string, unknown>;
}

function readQuantity(
  obj: Record<string, unknown>,
  d: Dimension,
  path: string,
  sink: Sink,
): { value: number; raw: string } | undefined {
  const v = obj[d.key];
  if (v === undefined) return undefined;
  const text = typeof v === 'string' ? v : typeof v === 'number' ? String(v) : null;
  const n = text === null ? null : d.parse(text);
  if (text === null || n === null || n < 0) {
    addViolation(
      sink,
      join(path, d.key),
      'invalid_quantity',
      `invalid ${d.key} quantity ${show(v)} (examples: ${d.examples})`,
      { requested: v },
    );
    return undefined;
  }
  return { value: n, raw: text };
}

function readGpu(res: Record<string, unknown>, path: string, sink: Sink): Gpu | undefined {
  const g = readObject(res, 'gpu', path, sink);
  if (!g) return undefined;
  const gp = join(path, 'gpu');
  checkKeys(g, GPU.keys, gp, sink);
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
  checkKeys(s, SECURITY.keys, sp, sink);
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

function emptyDimension(): DimensionRead {
  return { amounts: [], limitDeclared: false };
}

/**
 * One quantity of one block: `resources` (both the request and the limit), or one side of
 * `resourceRequirements`.
 */
function readAmount(
  block: Record<string, unknown>,
  d: Dimension,
  side: 'guaranteed' | 'requests' | 'limits',
  bp: string,
  into: DimensionRead,
  sink: Sink,
): void {
  const q = readQuantity(block, d, bp, sink);
  if (!q) return;
  if (side !== 'limits') into.request = q.value;
  if (side !== 'requests') {
    into.limit = q.value;
    into.limitDeclared = true;
  }
  into.amounts.push({
    path: join(bp, d.key),
    value: q.value,
    raw: q.raw,
    // A limit alone also sets the request (Kubernetes semantics), so it is checked as one.
    isRequest: side !== 'limits' || into.request === undefined,
    source: 'spec',
  });
}

function readAmounts(
  block: Record<string, unknown>,
  side: 'guaranteed' | 'requests' | 'limits',
  bp: string,
  cpu: DimensionRead,
  memory: DimensionRead,
  sink: Sink,
): void {
  checkKeys(block, RESOURCES.keys, bp, sink);
  readAmount(block, CPU, side, bp, cpu, sink);
  readAmount(block, MEMORY, side, bp, memory, sink);
}

/** A limit below its request is refused (both written under resourceRequirements). */
function checkLimitOverRequest(d: Dimension, r: DimensionRead, rrp: string, sink: Sink): void {
  if (r.request !== undefined && r.limit !== undefined && r.limit < r.request) {
    addViolation(
      sink,
      join(rrp, `limits.${d.key}`),
      'range',
      `limit ${d.format(r.limit)} is below the request ${d.format(r.request)}`,
      { requested: r.limit, limit: r.request },
    );
  }
}

/** Resources: `resources` (requests = limits) xor `resourceRequirements`. */
function readResources(
  v: Record<string, unknown>,
  path: string,
  sink: Sink,
): { cpu: DimensionRead; memory: DimensionRead; gpu: Gpu | undefined; gpuPath: string } {
  const cpu = emptyDimension();
  const memory = emptyDimension();
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
    readAmounts(res, 'guaranteed', rp, cpu, memory, sink);
    gpu = readGpu(res, rp, sink);
  } else if (rr) {
    const rrp = join(path, 'resourceRequirements');
    checkKeys(rr, REQUIREMENTS.keys, rrp, sink);
    const req = readObject(rr, 'requests', rrp, sink);
    const lim = readObject(rr, 'limits', rrp, sink);
    if (req) {
      const qp = join(rrp, 'requests');
      readAmounts(req, 'requests', qp, cpu, memory, sink);
      gpu = readGpu(req, qp, sink);
      if (gpu) gpuPath = join(qp, 'gpu');
    }
    if (lim) {
      const lp = join(rrp, 'limits');
      readAmounts(lim, 'limits', lp, cpu, memory, sink);
      // GPU is not a burst dimension: taken from requests, or from limits when requests omit it.
      if (!gpu) {
        gpu = readGpu(lim, lp, sink);
        if (gpu) gpuPath = join(lp, 'gpu');
      } else if (lim.gpu !== undefined) readGpu(lim, lp, sink);
    }
    checkLimitOverRequest(CPU, cpu, rrp, sink);
    checkLimitOverRequest(MEMORY, memory, rrp, sink);
  }
  return { cpu, memory, gpu, gpuPath };
}

function readFiles(v: Record<string, unknown>, path: string, sink: Sink): ContainerRead['files'] {
  const files: ContainerRead['files'] = [];
  const rawFiles = readArray(v, 'files', path, sink, 1024);
  if (!rawFiles) return files;
  for (let i = 0; i < rawFiles.length; i++) {
    const f: unknown = rawFiles[i];
    const fp = idx(join(path, 'files'), i);
    if (!isObj(f)) {
      addViolation(sink, fp, 'type', `expected {path, content}, got ${typeName(f)}`);
      continue;
    }
    checkKeys(f, FILE.keys, fp, sink);
    const fpath = readString(f, 'path', fp, sink);
    const content = readString(f, 'content', fp, sink);
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
    if (content === undefined) {
      // Required by the contract: an empty file is written as content "".
      if (f.content === undefined) {
        addViolation(
          sink,
          join(fp, 'content'),
          'required',
          'content is required ("" for an empty file)',
        );
      }
    } else if (!BASE64.test(content)) {
      addViolation(
        sink,
        join(fp, 'content'),
        'invalid_base64',
        'content must be base64-encoded bytes',
      );
    }
    if (fpath !== undefined) files.push({ path: fpath, content: content ?? '' });
  }
  return files;
}

function readMounts(
  v: Record<string, unknown>,
  path: string,
  sink: Sink,
): ContainerRead['volumeMounts'] {
  const volumeMounts: ContainerRead['volumeMounts'] = [];
  const rawMounts = readArray(v, 'volumeMounts', path, sink, 256);
  if (!rawMounts) return volumeMounts;
  for (let i = 0; i < rawMounts.length; i++) {
    const m: unknown = rawMounts[i];
    const mp = idx(join(path, 'volumeMounts'), i);
    if (!isObj(m)) {
      addViolation(sink, mp, 'type', `expected a volume mount object, got ${typeName(m)}`);
      continue;
    }
    checkKeys(m, MOUNT.keys, mp, sink);
    const volume = readString(m, 'volume', mp, sink);
    const mountPath = readString(m, 'mountPath', mp, sink);
    const subPath = readString(m, 'subPath', mp, sink);
    const readOnly = readBool(m, 'readOnly', mp, sink) ?? false;
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
      volumeMounts.push({ volume, mountPath, readOnly, subPath: subPath || null });
    }
  }
  return volumeMounts;
}

/** Fields other planes resolve: checked for shape here, then passed through untouched. */
function readPassthrough(
  v: Record<string, unknown>,
  path: string,
  sink: Sink,
): Record<string, unknown> {
  const passthrough: Record<string, unknown> = {};
  const stores = readRecordList(v, 'secretStores', path, sink);
  if (stores !== undefined) passthrough.secretStores = stores;
  const credentials = readObject(v, 'imagePullCredentials', path, sink);
  if (credentials !== undefined) passthrough.imagePullCredentials = credentials;
  const probe = readObject(v, 'startupProbe', path, sink);
  if (probe !== undefined) passthrough.startupProbe = probe;
  return passthrough;
}

function readName(
  v: Record<string, unknown>,
  path: string,
  implicitName: string | undefined,
  sink: Sink,
): string {
  const name = readString(v, 'name', path, sink);
  if (name === undefined || name === '') {
    if (implicitName !== undefined) return implicitName;
    addViolation(
      sink,
      join(path, 'name'),
      'required',
      'a container name is required when the sandbox has several containers',
    );
    return '';
  }
  if (name.length > 253 || !DNS1123.test(name)) {
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
  return name;
}

/** Reads one container (every field of {@link CONTAINER}); defaults are the merge's business. */
function readContainer(
  v: unknown,
  path: string,
  implicitName: string | undefined,
  sink: Sink,
): ContainerRead | undefined {
  if (!isObj(v)) {
    addViolation(sink, path, 'type', `expected a container object, got ${typeName(v)}`);
    return undefined;
  }
  checkKeys(v, CONTAINER.keys, path, sink);
  const name = readName(v, path, implicitName, sink);
  const image = readString(v, 'image', path, sink);
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
  const { cpu, memory, gpu, gpuPath } = readResources(v, path, sink);
  return {
    path,
    name,
    image,
    command,
    args,
    env,
    workingDir: workingDir || null,
    primaryFlag,
    cpu,
    memory,
    gpu,
    gpuPath,
    files: readFiles(v, path, sink),
    volumeMounts: readMounts(v, path, sink),
    passthrough: readPassthrough(v, path, sink),
    securityContext: readSecurity(v, path, sink),
  };
}

/** `containers` (omitted = one default container) or `initContainers`. */
export function readContainers(
  spec: Record<string, unknown>,
  key: 'containers' | 'initContainers',
  sink: Sink,
): ContainerRead[] {
  const raw = spec[key];
  if (raw === undefined) {
    if (key === 'initContainers') return [];
    const w = readContainer({}, 'containers[0]', PLATFORM_DEFAULTS.containerName, sink);
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
  const out: ContainerRead[] = [];
  for (let i = 0; i < list.length; i++) {
    const implicit =
      key === 'containers' && list.length === 1 ? PLATFORM_DEFAULTS.containerName : undefined;
    const w = readContainer(list[i], idx(key, i), implicit, sink);
    if (w) out.push(w);
  }
  return out;
}
