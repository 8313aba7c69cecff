import { paddockVitest } from '../../vitest.shared.mts';
// The fault-injection suite (API errors, a deposed leader, watch drops and conflicts, about a minute at the acceptance
// sizes) is part of the default run; `pnpm test:faults` runs it alone (PADDOCK_SOAK=1: 1,000 changes, 60 kills).
export default paddockVitest({ include: ['test/*.spec.ts', 'test/faults/**/*.spec.ts'] });
