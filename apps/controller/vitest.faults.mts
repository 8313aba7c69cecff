import { paddockVitest } from '../../vitest.shared.mts';
export default paddockVitest({ include: ['test/faults/**/*.spec.ts'], timeoutMs: 600_000 });
