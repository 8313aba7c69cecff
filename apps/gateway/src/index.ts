export { createGateway, buildOpenApi, type RunningGateway } from './app';
export { parseGatewayEnv, type GatewayConfig } from './config/env';
export { migrateGatewayToLatest, GATEWAY_MIGRATION_TABLE } from './db/migrate';
export { planPlacement, type PlacementCandidate, type PlacementPlan } from './placement/placement';
export { EXEC_STREAM_PATH, CHANNEL_STDOUT, CHANNEL_STDERR } from './http/exec-websocket';
