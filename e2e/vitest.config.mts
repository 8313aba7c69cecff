import { paddockVitest } from '../vitest.shared.mts';
export default paddockVitest({ timeoutMs: 180_000 });
