import { RUNNER_DRIVER_ENV, RUNNER_HOST_SETTINGS_ENV } from '@paddock/contracts';
import { RunnerEnvSchema } from '../../src/config/env';

/**
 * A controller starts runners with an environment built from the names in `@paddock/contracts`
 * only. Every variable the runner reads must be one of them, or a runner started by the local
 * driver would silently never see it.
 */
describe('runner environment contract', () => {
  it('every variable the runner reads is set by the driver or passed as a host setting', () => {
    const known = new Set<string>([...RUNNER_DRIVER_ENV, ...RUNNER_HOST_SETTINGS_ENV]);
    const read = Object.keys(RunnerEnvSchema.shape);
    expect(read.filter((k) => !known.has(k))).toEqual([]);
  });
});
