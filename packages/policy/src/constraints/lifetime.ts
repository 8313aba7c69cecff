import * as m_contracts from '@paddock/contracts';
import * as m_violations from '../violations';
import { type ConstraintInput } from './check';

// Hot-path helpers bound once: transpilers (tsx/esbuild) turn imported names into getter
// calls on every use, which cost ~10% of a resolution. Locals are plain calls.
const { MAX_LIFETIME_SECONDS } = m_contracts;
const { addViolation } = m_violations;

/** `maxLifetimeSeconds`: 0 asks for the default, negative values and more than 30 days are refused. */
export function checkLifetime({ read, sink }: ConstraintInput): void {
  const requested = read.requestedLifetime;
  if (requested === undefined) return;
  if (requested < 0) {
    addViolation(
      sink,
      'maxLifetimeSeconds',
      'range',
      `must be >= 0 (0 = platform default), got ${requested}`,
      { requested },
    );
  } else if (requested > MAX_LIFETIME_SECONDS) {
    addViolation(
      sink,
      'maxLifetimeSeconds',
      'max_lifetime',
      `requested ${requested} exceeds the platform maximum ${MAX_LIFETIME_SECONDS} (30 days)`,
      { requested, limit: MAX_LIFETIME_SECONDS },
    );
  }
}
