import { mergeConfig } from 'vitest/config';
import { paddockVitest } from '../../vitest.shared.mts';

// Two spec files at a time even on 2 cores: the acceptance files spend most of their time
// waiting on terraform and the platform's processes, and the longest one sets the suite's time.
export default mergeConfig(paddockVitest({ timeoutMs: 300_000, globalSetup: ['test/support/global-build.ts'] }), { test: { maxWorkers: 2 } });
