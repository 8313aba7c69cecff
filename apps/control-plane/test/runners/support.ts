import { execFile } from 'node:child_process';
import { CommandBus } from '@nestjs/cqrs';
import type { RunnerInstallReport } from '@paddock/contracts';
import { api, type TestApp } from '../support/app';
import type { Release } from '../../src/modules/releases';
import { ApplyInstallReportCommand } from '../../src/modules/runners';

/** Publishes a runner release on a channel (operator-only route); returns its revision. */
export async function publishRelease(t: TestApp, channel: 'RELEASE_CHANNEL_STABLE' | 'RELEASE_CHANNEL_RAPID', version: string): Promise<number> {
  const r = await api<Release>(t, 'POST', '/v1/sandbox/releases', {
    token: t.adminToken,
    body: { channel, version, image: `registry.example.com/paddock/runner:${version}` },
  });
  if (r.status !== 200) throw new Error(`publishing ${version} failed: ${r.status} ${r.text}`);
  return r.body.revision;
}

/** Sends an install report straight to the command bus, as the NATS intake does. */
export async function report(t: TestApp, r: RunnerInstallReport): Promise<void> {
  await t.app.get(CommandBus).execute(new ApplyInstallReportCommand(r));
}

/**
 * A seed command's result: status and parsed JSON body (`undefined` for pipelines, empty or non-JSON
 * output). `T` is the body the caller expects, as with `api<T>()`; it is not validated here.
 */
export interface CurlResult<T = unknown> {
  status: number;
  body: T;
  text: string;
}

/**
 * Runs a seed's `curl` command line through bash and the real curl binary, with the seed's host
 * swapped for the test server and `$TOKEN` in the environment. `-s` and a trailing status line are
 * added so the test can read both. Pipelines (`| jq ...`) run as written.
 */
export function runSeedCurl<T = unknown>(
  command: string,
  opts: { baseUrl: string; token: string; cwd: string; replace?: Record<string, string> },
): Promise<CurlResult<T>> {
  let cmd = command.replaceAll('https://api.coreweave.com', opts.baseUrl);
  for (const [k, v] of Object.entries(opts.replace ?? {})) cmd = cmd.replaceAll(k, v);
  const piped = cmd.includes('|');
  // With a pipeline the status line would go into jq; such commands only write files.
  const instrumented = piped ? cmd.replace(/^curl /, 'curl -sS ') : cmd.replace(/^curl /, "curl -sS -w '\\n%{http_code}' ");
  return new Promise((resolve, reject) => {
    execFile('bash', ['-c', instrumented], { cwd: opts.cwd, env: { ...process.env, TOKEN: opts.token } }, (err, stdout, stderr) => {
      if (err) return reject(new Error(`${instrumented}\nfailed: ${err.message}\n${stderr}`));
      if (piped) return resolve({ status: 0, body: undefined as T, text: stdout });
      const cut = stdout.lastIndexOf('\n');
      const text = stdout.slice(0, cut);
      let body: unknown;
      try {
        body = text ? JSON.parse(text) : undefined;
      } catch {
        body = undefined;
      }
      resolve({ status: Number(stdout.slice(cut + 1)), body: body as T, text });
    });
  });
}
