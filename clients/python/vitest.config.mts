import { paddockVitest } from '../../vitest.shared.mts';
// The Python suite runs once, against one platform, inside the spec's beforeAll.
export default paddockVitest({ timeoutMs: 180_000 });
