import { waitFor } from '@paddock/testing';
import { renderSandboxMetrics, startMetricsServer } from '../../src/observability/sandbox-metrics';
import { BASE_IMAGE, ORG, smallSpec, startHarness, type Harness } from '../support/harness';

/** The runner's Prometheus endpoint: per-sandbox usage from the cgroups and each sandbox's state. */
describe('runner service: per-sandbox Prometheus metrics', () => {
  let h: Harness;
  let server: { url: string; close(): Promise<void> } | undefined;

  beforeAll(async () => {
    h = await startHarness();
    server = await startMetricsServer(0, '127.0.0.1', () => renderSandboxMetrics(h.runnerId, h.runner.service.metricsRows(), h.runner.service.capacity()));
  });
  afterAll(async () => {
    await server?.close();
    await h?.stop();
  });

  const scrape = async (): Promise<string> => (await fetch(server?.url ?? '')).text();
  const value = (text: string, metric: string, sandboxId: string): number | undefined => {
    const line = text.split('\n').find((l) => l.startsWith(`${metric}{`) && l.includes(`sandbox_id="${sandboxId}"`));
    return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
  };

  it('shows a busy sandbox using CPU and memory, then the paused one using no CPU', async () => {
    await h.createRunning(
      'metrics-1',
      smallSpec({ containers: [{ name: 'main', image: BASE_IMAGE, resources: { cpu: '500m', memory: '128Mi' }, command: ['/bin/sh', '-c', 'i=0; while :; do i=$((i+1)); done'] }] }),
    );
    const busy = await waitFor(
      async () => {
        h.runner.service.sampleUsage();
        const text = await scrape();
        return (value(text, 'paddock_sandbox_cpu_millicores', 'metrics-1') ?? 0) > 200 ? text : undefined;
      },
      { timeoutMs: 20_000, intervalMs: 500, what: 'CPU use in the metrics' },
    );
    expect(value(busy, 'paddock_sandbox_memory_bytes', 'metrics-1')).toBeGreaterThanOrEqual(0);
    expect(busy).toContain(`paddock_sandbox_state{runner_id="${h.runnerId}",sandbox_id="metrics-1",organization_id="${ORG}",state="STATE_RUNNING"} 1`);
    expect(busy).toContain('# TYPE paddock_sandbox_cpu_millicores gauge');

    await h.client.call('pause', { sandboxId: 'metrics-1', organizationId: ORG });
    const paused = await waitFor(
      async () => {
        h.runner.service.sampleUsage();
        const text = await scrape();
        return value(text, 'paddock_sandbox_cpu_millicores', 'metrics-1') === 0 ? text : undefined;
      },
      { timeoutMs: 20_000, intervalMs: 500, what: 'no CPU use once paused' },
    );
    expect(paused).toContain('state="STATE_PAUSED"} 1');
    expect((await fetch(server?.url.replace('/metrics', '/other') ?? '')).status).toBe(404);
  }, 60_000);
});
