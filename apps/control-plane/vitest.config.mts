import { paddockVitest } from '../../vitest.shared.mts';
export default paddockVitest({ nest: true, globalSetup: ['test/support/global-setup.ts'] });
