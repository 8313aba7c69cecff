/**
 * Every NATS subject Paddock uses is built here and nowhere else.
 *
 * Scheme: `<kind>.<plane>.v<major>.<scope...>.<verb>`
 * - `rpc.*`  request/reply (a reply is expected; the queue group is the service name)
 * - `evt.*`  fire-and-forget events (state changes, heartbeats, reports)
 */

const token = (s: string): string => {
  // A subject token may not contain separators or wildcards; ids are validated upstream, this
  // guards against building a subject that would silently match something else.
  if (!s || /[\s.*>]/.test(s)) throw new Error(`invalid NATS subject token: ${JSON.stringify(s)}`);
  return s;
};

export const subjects = {
  /** Runner heartbeat (runner → control plane, gateway). */
  runnerHeartbeat: (runnerId: string): string => `evt.runner.v1.${token(runnerId)}.heartbeat`,
  /** Wildcard for every runner's heartbeat. */
  allRunnerHeartbeats: (): string => 'evt.runner.v1.*.heartbeat',
  /** Sandbox state change published by the runner that owns the sandbox. */
  sandboxState: (runnerId: string): string => `evt.runner.v1.${token(runnerId)}.sandbox.state`,
  allSandboxStates: (): string => 'evt.runner.v1.*.sandbox.state',
  /** Request/reply operations served by one runner, e.g. `rpc.runner.v1.r1.sandbox.create`. */
  runnerRpc: (runnerId: string, op: RunnerRpcOp): string => `rpc.runner.v1.${token(runnerId)}.sandbox.${op}`,
  /** Every RPC subject of one runner (what the runner subscribes to). */
  runnerRpcAll: (runnerId: string): string => `rpc.runner.v1.${token(runnerId)}.sandbox.*`,
  /** Streaming channels of one exec/log stream, keyed by a stream id chosen by the caller. */
  streamToRunner: (runnerId: string, streamId: string): string =>
    `stream.runner.v1.${token(runnerId)}.${token(streamId)}.in`,
  streamFromRunner: (runnerId: string, streamId: string): string =>
    `stream.runner.v1.${token(runnerId)}.${token(streamId)}.out`,
  /** Every stream channel into one runner (what it subscribes to); `'*'` = every runner. */
  allStreamsToRunner: (runnerId: string): string => `stream.runner.v1.${runnerId === '*' ? '*' : token(runnerId)}.*.in`,
  /** Every stream channel out of one runner; `'*'` = every runner. */
  allStreamsFromRunner: (runnerId: string): string => `stream.runner.v1.${runnerId === '*' ? '*' : token(runnerId)}.*.out`,
  /** Every RPC subject of every runner (what a gateway may request). */
  allRunnerRpcs: (): string => 'rpc.runner.v1.*.sandbox.*',
  /** Install status reports (controller → control plane). */
  installReport: (clusterId: string): string => `evt.controller.v1.${token(clusterId)}.install`,
  allInstallReports: (): string => 'evt.controller.v1.*.install',
  /** Connection-status changes derived by the control plane (control plane → anyone). */
  runnerConnection: (runnerId: string): string => `evt.cp.v1.runner.${token(runnerId)}.connection`,
  allRunnerConnections: (): string => 'evt.cp.v1.runner.*.connection',
  /**
   * A gateway applied a state change to a sandbox row (gateway → every gateway, no queue group):
   * long polls parked on the other gateways re-read the row at once. Payload: the sandbox id.
   */
  sandboxRowChanged: (): string => 'evt.gw.v1.sandbox.changed',
  /**
   * A cluster's controller asks the control plane for the NATS credentials of one runner of that
   * cluster (request/reply, controller → control plane). Only that cluster's controller may
   * publish here (its NATS permissions), so the subject itself says which cluster is asking.
   */
  runnerCredentialsRequest: (clusterId: string): string => `rpc.cp.v1.cluster.${token(clusterId)}.runnerCredentials`,
  allRunnerCredentialsRequests: (): string => 'rpc.cp.v1.cluster.*.runnerCredentials',
  /**
   * The gateway asks the control plane for the secret values one sandbox create needs
   * (request/reply, gateway → control plane). Only gateways may publish here.
   */
  secretsResolve: (): string => 'rpc.cp.v1.secrets.resolve',
  /**
   * The prefix of the reply subjects of one requesting NATS user (`<prefix>.<random>.<n>`). Each
   * requesting role gets its own, and may subscribe only below it, so no one reads replies meant
   * for another process.
   */
  inboxPrefix: (role: string, userName: string): string => `_INBOX.${token(role)}.${token(userName)}`,
} as const;

export const RUNNER_RPC_OPS = [
  'create',
  'get',
  'list',
  'delete',
  'exec',
  'execStream',
  'readFile',
  'writeFile',
  'listDir',
  'stat',
  'remove',
  'logs',
  'deleteLogs',
  'portForward',
  'pause',
  'resume',
  'snapshot',
  'deleteSnapshot',
] as const;
export type RunnerRpcOp = (typeof RUNNER_RPC_OPS)[number];

/** Queue groups: one per service, so several instances share the work. */
export const queueGroups = {
  controlPlane: 'paddock-control-plane',
  gateway: 'paddock-gateway',
  runner: (runnerId: string): string => `paddock-runner-${token(runnerId)}`,
} as const;
