export { freePort } from './ports';
export { startPostgres, type ThrowawayPostgres } from './postgres';
export { startNats, type NatsTestInstallation, type ThrowawayNats } from './nats';
export { FixedClock, sequentialIds, waitFor } from './clock';
export { percentile, latencyStats, timeSequential, row, medianOf, report, type BenchRow, type LatencyStats } from './bench';
export { REPO_ROOT, buildPackages, startAppProcess, startControlPlaneProcess, controllerNatsEnv, CONTROL_PLANE_ENTRY, httpJson, type AppProcess } from './app-process';
export { seedRunnerYaml } from './seeds';
export { processesUsing, removeStateDir } from './state-dirs';
export { DB_ACCESS_ENTRY, provisionGatewayRole, provisionControllerRole } from './db-roles';
