import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ResourceUsage, RunnerCapacity, SandboxState } from '@paddock/contracts';

/** One live sandbox as the metrics show it. */
export interface SandboxMetricsRow {
  sandboxId: string;
  organizationId: string;
  state: SandboxState;
  usage?: ResourceUsage;
}

const escape = (v: string): string => v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');

/**
 * The runner's Prometheus text exposition (format 0.0.4): per-sandbox CPU and memory from the
 * last cgroup sample, each live sandbox's state, and the runner's free capacity. Written by hand:
 * four gauges do not need a client library in the runner.
 */
export function renderSandboxMetrics(runnerId: string, rows: SandboxMetricsRow[], capacity: RunnerCapacity): string {
  const out: string[] = [];
  const gauge = (name: string, help: string, samples: [Record<string, string>, number][]): void => {
    out.push(`# HELP ${name} ${help}`, `# TYPE ${name} gauge`);
    for (const [labels, value] of samples) {
      const l = Object.entries({ runner_id: runnerId, ...labels })
        .map(([k, v]) => `${k}="${escape(v)}"`)
        .join(',');
      out.push(`${name}{${l}} ${value}`);
    }
  };
  const ids = (r: SandboxMetricsRow): Record<string, string> => ({ sandbox_id: r.sandboxId, organization_id: r.organizationId });
  const sampled = rows.filter((r) => r.usage);
  gauge('paddock_sandbox_cpu_millicores', 'CPU the sandbox used over the last sampling period, in millicores.', sampled.map((r) => [ids(r), r.usage?.cpuMillicores ?? 0]));
  gauge('paddock_sandbox_memory_bytes', 'Memory the sandbox uses (its cgroup, less inactive file cache).', sampled.map((r) => [ids(r), (r.usage?.memoryMb ?? 0) * 1024 * 1024]));
  gauge('paddock_sandbox_state', 'Live sandboxes by state (1 per sandbox).', rows.map((r) => [{ ...ids(r), state: r.state }, 1]));
  gauge('paddock_runner_cpu_millis_free', 'CPU requests the runner can still admit (paused sandboxes hold none).', [[{}, capacity.cpuMillisFree]]);
  gauge('paddock_runner_memory_bytes_free', 'Memory requests the runner can still admit.', [[{}, capacity.memoryBytesFree]]);
  return `${out.join('\n')}\n`;
}

/** Serves `GET /metrics` (and nothing else) on `port` (0 = any free port). */
export async function startMetricsServer(port: number, host: string, render: () => string): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('only GET /metrics here\n');
      return;
    }
    res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' }).end(render());
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const addr = server.address() as AddressInfo;
  return {
    url: `http://${host}:${addr.port}/metrics`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
