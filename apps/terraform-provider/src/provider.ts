import { randomUUID } from 'node:crypto';
import { ControlPlaneClient } from './api/client';
import { PROVIDER_SCHEMA, resolveProviderSettings, validateProviderConfig } from './api/config';
import type { ProviderDefinition } from './framework/provider';
import type { Logger } from './log';
import type { RunnerContext } from './runner/context';
import { managedRunnerDataSource } from './runner/data-source';
import { managedRunnerResource } from './runner/resource';
import { TEARDOWN_TIMEOUT_MS } from './runner/teardown';
import { PROVIDER_VERSION } from './version';

/** The `coreweave` provider: its configuration, the managed runner resource and data source. */
export function coreweaveProvider(opts: { log: Logger; env: Record<string, string | undefined> }): ProviderDefinition<RunnerContext> {
  let stopped = false;
  return {
    schema: PROVIDER_SCHEMA,
    resources: [managedRunnerResource],
    dataSources: [managedRunnerDataSource],
    validateConfig: validateProviderConfig,
    configure(config, terraformVersion) {
      const { settings, diagnostics } = resolveProviderSettings(config, opts.env);
      if (!settings) return { diagnostics };
      opts.log.redact(settings.token);
      opts.log.log('debug', 'Provider configured', { endpoint: settings.endpoint.toString(), http_timeout_ms: settings.timeoutMs });
      const client = new ControlPlaneClient({
        settings,
        log: opts.log,
        userAgent: `terraform-provider-coreweave/${PROVIDER_VERSION} (+https://www.terraform.io) Terraform/${terraformVersion || 'unknown'}`,
      });
      return {
        diagnostics: [],
        context: {
          client,
          log: opts.log,
          now: () => Date.now(),
          sleep: (ms) => new Promise((r) => setTimeout(r, ms)),
          stopped: () => stopped,
          newRequestId: randomUUID,
          teardownTimeoutMs: TEARDOWN_TIMEOUT_MS,
        },
      };
    },
    stop() {
      stopped = true;
    },
  };
}
