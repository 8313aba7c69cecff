import * as m_violations from '../violations';
import { type ConstraintInput } from './check';
import * as m_check from './check';

// Hot-path helpers bound once: transpilers (tsx/esbuild) turn imported names into getter
// calls on every use, which cost ~10% of a resolution. Locals are plain calls.
const { addViolation, join, show } = m_violations;
const { CONSTRAINT } = m_check;

/** GPUs per container: the policy's maximum, what the runner can attach, which GPU types it has. */
export function checkGpus({ merged, policy: p, caps, sink }: ConstraintInput): void {
  for (const w of merged.all) {
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
    // A runner with no GPUs offers no GPU model either: the type is refused beside the count.
    const noGpus = caps.maxGpuCount === 0;
    if (
      gpus > 0 &&
      gpuType !== undefined &&
      (caps.gpuTypes.length > 0 || noGpus) &&
      !caps.gpuTypes.includes(gpuType)
    ) {
      addViolation(
        sink,
        join(w.gpuPath, 'type'),
        'runner_capability',
        noGpus
          ? `GPU type ${show(gpuType)} is not offered by the runner (it has no GPUs)`
          : `GPU type ${show(gpuType)} is not offered by the runner (offers ${caps.gpuTypes.join(', ')})`,
        { requested: gpuType, limit: caps.gpuTypes },
      );
    }
  }
}
