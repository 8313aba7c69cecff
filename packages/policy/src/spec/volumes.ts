import type { ResolvedVolume } from '@paddock/contracts';
import * as m_contracts from '@paddock/contracts';
import * as m_defaults from '../defaults';
import * as m_network from '../network';
import * as m_quantity from '../quantity';
import * as m_spec_reader from '../spec-reader';
import { type Sink } from '../violations';
import * as m_violations from '../violations';
import * as m_container from './container';
import * as m_fields from './fields';

// Hot-path helpers bound once: transpilers (tsx/esbuild) turn imported names into getter
// calls on every use, which cost ~10% of a resolution. Locals are plain calls.
const { STORAGE_MEDIA } = m_contracts;
const { PLATFORM_DEFAULTS, SPEC_LIMITS } = m_defaults;
const { isObj } = m_network;
const { parseMemoryBytes } = m_quantity;
const { checkKeys, readArray, readObject, readString } = m_spec_reader;
const { addViolation, idx, join, show, typeName } = m_violations;
const { DNS1123 } = m_container;
const { SCRATCH, VOLUME } = m_fields;

const MEDIA = new Set<string>(STORAGE_MEDIA);

/** One volume as requested; scratch sizes in percent are resolved by the merge. */
export interface VolumeRead {
  out: ResolvedVolume;
  path: string;
  percent?: number;
  sizeRaw?: string;
}

export function readVolumes(spec: Record<string, unknown>, sink: Sink): VolumeRead[] {
  const list = readArray(spec, 'volumes', '', sink, SPEC_LIMITS.maxVolumes);
  if (!list) return [];
  const out: VolumeRead[] = [];
  const names = new Set<string>();
  for (let i = 0; i < list.length; i++) {
    const v: unknown = list[i];
    const vp = idx('volumes', i);
    if (!isObj(v)) {
      addViolation(sink, vp, 'type', `expected a volume object, got ${typeName(v)}`);
      continue;
    }
    checkKeys(v, VOLUME.keys, vp, sink);
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
    checkKeys(s, SCRATCH.keys, sp, sink);
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
    const w: VolumeRead = {
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
