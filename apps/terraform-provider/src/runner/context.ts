import type { ControlPlaneClient } from '../api/client';
import type { Logger } from '../log';

/** What a configured provider gives the runner resource and data source. */
export interface RunnerContext {
  client: ControlPlaneClient;
  log: Logger;
  now: () => number;
  sleep: (ms: number) => Promise<void>;
  stopped: () => boolean;
  newRequestId: () => string;
  teardownTimeoutMs: number;
}
