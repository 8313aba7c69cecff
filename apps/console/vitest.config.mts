import { paddockVitest } from '../../vitest.shared.mts';
// The browser suite drives a real platform: its steps wait on sandboxes and runners.
export default paddockVitest({ timeoutMs: 180_000 });
