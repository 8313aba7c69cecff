import { paddockVitest } from '../../vitest.shared.mts';
export default paddockVitest({ globalSetup: ['test/support/global-build.ts'] });
