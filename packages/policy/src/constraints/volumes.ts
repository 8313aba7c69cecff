import * as m_quantity from '../quantity';
import * as m_violations from '../violations';
import { type ConstraintInput } from './check';
import * as m_check from './check';

// Hot-path helpers bound once: transpilers (tsx/esbuild) turn imported names into getter
// calls on every use, which cost ~10% of a resolution. Locals are plain calls.
const { formatMemory } = m_quantity;
const { addViolation, join, show } = m_violations;
const { CONSTRAINT } = m_check;

/** Scratch volumes: the medium (policy and runner) and the size against the policy maximum. */
export function checkVolumes({ read, policy: p, caps, sink }: ConstraintInput): void {
  for (const v of read.volumes) {
    if (v.out.kind !== 'scratch') continue;
    const medium = v.out.medium;
    if (p.media.length && !p.media.includes(medium)) {
      addViolation(
        sink,
        join(v.path, 'scratch.medium'),
        'volume_medium_not_allowed',
        `storage medium ${medium} is not allowed by the policy ${show(p.media)} (${CONSTRAINT.allowedMedia})`,
        { requested: medium, limit: p.media, constraint: CONSTRAINT.allowedMedia },
      );
    }
    if (!caps.storageMedia.includes(medium)) {
      addViolation(sink, join(v.path, 'scratch.medium'), 'runner_capability', `the runner does not offer ${medium} volumes`, {
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
