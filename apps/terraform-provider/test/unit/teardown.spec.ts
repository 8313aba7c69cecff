import { FixedClock } from '@paddock/testing';
import { ApiError } from '../../src/api/client';
import { createLogger } from '../../src/log';
import { TEARDOWN_TIMEOUT_MS, waitForTeardown, type TeardownDeps } from '../../src/runner/teardown';
import { seedRunner } from './fixtures';

/** The wait loop with a fixed clock: each sleep advances it, and `answers` are what successive GETs return. */
function harness(answers: (string | null | Error)[], opts: { stopAfter?: number } = {}) {
  const clock = new FixedClock();
  const sleeps: number[] = [];
  const messages: string[] = [];
  let calls = 0;
  const deps: TeardownDeps = {
    async getRunner() {
      const a = answers[Math.min(calls++, answers.length - 1)];
      if (a instanceof Error) throw a;
      return a === null || a === undefined ? null : seedRunner({ installStatus: a as never });
    },
    now: () => clock.now().getTime(),
    async sleep(ms) {
      sleeps.push(ms);
      clock.advance(ms);
    },
    log: createLogger((l) => messages.push((JSON.parse(l) as { '@message': string })['@message'])),
    stopped: () => opts.stopAfter !== undefined && calls >= opts.stopAfter,
  };
  return { deps, sleeps, messages, calls: () => calls };
}

describe('destroy waits for the controller\'s teardown', () => {
  it('polls (0.5 s, 1 s, then every 2 s) until the API answers not found, reporting status changes', async () => {
    const h = harness(['RUNNER_INSTALL_STATUS_DELETING', 'RUNNER_INSTALL_STATUS_DELETING', 'RUNNER_INSTALL_STATUS_DELETING', 'RUNNER_INSTALL_STATUS_DELETING', null]);
    const result = await waitForTeardown('prod-runner', h.deps);
    expect(result).toEqual({ gone: true, waitedMs: 5500 });
    expect(h.sleeps).toEqual([500, 1000, 2000, 2000]);
    expect(h.messages[0]).toBe('Waiting for the controller to tear down runner prod-runner: install status RUNNER_INSTALL_STATUS_DELETING, 0s elapsed (gives up after 30m0s)');
    expect(h.messages.at(-1)).toBe('Runner prod-runner is gone after 6s');
  });

  it('gives up after 30 minutes, with the last status seen, and reports progress along the way', async () => {
    const h = harness(['RUNNER_INSTALL_STATUS_DELETING']);
    const result = await waitForTeardown('prod-runner', h.deps);
    expect(result).toEqual({ gone: false, waitedMs: TEARDOWN_TIMEOUT_MS, reason: 'timeout', lastStatus: 'RUNNER_INSTALL_STATUS_DELETING' });
    expect(h.messages.length).toBeGreaterThanOrEqual(60);
    expect(h.messages.at(-1)).toContain('29m');
  });

  it('keeps waiting through an API that briefly does not answer; stops on any other error', async () => {
    const h = harness([new ApiError('unreachable', 'GET: ECONNREFUSED'), new ApiError('http', 'busy', { status: 503 }), null]);
    expect(await waitForTeardown('prod-runner', h.deps)).toMatchObject({ gone: true });
    const denied = harness([new ApiError('http', 'no', { status: 403, code: 'permission_denied' })]);
    await expect(waitForTeardown('prod-runner', denied.deps)).rejects.toThrow('no');
  });

  it('ends when Terraform asks the provider to stop', async () => {
    const h = harness(['RUNNER_INSTALL_STATUS_DELETING'], { stopAfter: 2 });
    expect(await waitForTeardown('prod-runner', h.deps)).toMatchObject({ gone: false, reason: 'stopped' });
  });
});
