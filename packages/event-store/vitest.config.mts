import { paddockVitest } from '../../vitest.shared.mts';

// Two test files at a time: most of this suite waits on Postgres (held transactions, child
// process start-up, crash/restart), so overlapping files halves wall time on 2 cores.
const base = paddockVitest();
export default { ...base, test: { ...base.test, maxWorkers: 2 } };
