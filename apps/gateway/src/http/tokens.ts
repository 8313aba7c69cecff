/** Nest injection tokens of the composition root's plain objects. */
export const LIFECYCLE = Symbol('SandboxLifecycleService');
export const OPS = Symbol('SandboxOpsService');
export const AUTH = Symbol('TokenAuthenticator');
export const HEALTH = Symbol('HealthProbe');
export const METRICS = Symbol('GatewayMetrics');
export const SNAPSHOTS = Symbol('SnapshotsService');

export interface HealthProbe {
  ready(): Promise<{ ok: boolean; checks: Record<string, string> }>;
}
