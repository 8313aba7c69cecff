import { paddockVitest } from '../../vitest.shared.mts';
export default paddockVitest({ timeoutMs: 300_000, globalSetup: ['test/support/global-build.ts'] });
