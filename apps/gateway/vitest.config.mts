import { paddockVitest } from '../../vitest.shared.mts';
export default paddockVitest({ nest: true, timeoutMs: 120_000 });
