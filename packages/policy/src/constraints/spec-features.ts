import * as m_spec_features from '../spec-features';
import * as m_violations from '../violations';
import { type ConstraintInput } from './check';

// Hot-path helpers bound once: transpilers (tsx/esbuild) turn imported names into getter
// calls on every use, which cost ~10% of a resolution. Locals are plain calls.
const { specFeatureUses } = m_spec_features;
const { addViolation } = m_violations;

/**
 * Every field that uses a spec feature the runner's backend does not declare is refused, naming
 * the field and the feature: the request is never launched with the field left out.
 */
export function checkSpecFeatures({ spec, read, caps, sink }: ConstraintInput): void {
  const uses = specFeatureUses(spec, read.primaryContainer);
  if (uses.length === 0) return;
  const honoured = caps.specFeatures;
  for (const u of uses) {
    if (honoured.includes(u.feature)) continue;
    addViolation(
      sink,
      u.field,
      'runner_capability',
      `the runner's backend does not honour ${u.feature}; pick a runner that declares it, or remove the field`,
      { requested: u.feature, limit: honoured },
    );
  }
}
