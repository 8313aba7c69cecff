import { paddockVitest } from '../../vitest.shared.mts';
// The fault-injection suite (RELIABILITY K-1, K-2, K-3, K-5, about a minute at the acceptance
// sizes) is part of the default run; `pnpm test:faults` runs it alone (PADDOCK_SOAK=1: 1,000 changes, 60 kills).
export default paddockVitest({ include: ['test/*.spec.ts', 'test/faults/**/*.spec.ts'] });
