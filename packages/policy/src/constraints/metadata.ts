import * as m_defaults from '../defaults';
import * as m_violations from '../violations';
import { type ConstraintInput } from './check';
import * as m_check from './check';

// Hot-path helpers bound once: transpilers (tsx/esbuild) turn imported names into getter
// calls on every use, which cost ~10% of a resolution. Locals are plain calls.
const { SPEC_LIMITS } = m_defaults;
const { addViolation, mapKey, show } = m_violations;
const { CONSTRAINT } = m_check;

/** The request's own annotations: the platform's count limit, the policy's count and prefixes. */
export function checkAnnotations({ read, policy: p, sink }: ConstraintInput): void {
  const keys = Object.keys(read.annotations).sort();
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
}
