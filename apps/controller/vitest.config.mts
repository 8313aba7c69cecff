import { paddockVitest } from '../../vitest.shared.mts';
// The fault-injection suite (RELIABILITY K-1, K-2, K-3, K-5) runs with `pnpm test:faults`.
export default paddockVitest({ include: ['test/*.spec.ts'] });
