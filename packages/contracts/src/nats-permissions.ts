import { subjects } from './subjects';

/**
 * What each kind of Paddock process may do on NATS, derived from the subject builders so that a
 * subject and the permission to use it cannot drift apart. nats-server enforces these: they are
 * the templates of the account's scoped signing keys (one key per role), and a user signed with a
 * role's key gets exactly that role's permissions, with `{{name()}}` replaced by the user's name.
 *
 * @example
 * natsRolePermissions('runner', 'r1').publish
 * // ['evt.runner.v1.r1.heartbeat', 'evt.runner.v1.r1.sandbox.state', 'stream.runner.v1.r1.*.out']
 */
export const NATS_ROLES = ['runner', 'controller', 'gateway', 'control-plane'] as const;
export type NatsRole = (typeof NATS_ROLES)[number];

/** The placeholder nats-server replaces with the user's name when it applies a role's template. */
export const NATS_USER_NAME_TEMPLATE = '{{name()}}';

/** What a role's user name is: the permissions are scoped by it. */
export const NATS_USER_NAME_MEANING: Record<NatsRole, string> = {
  runner: 'the runner id',
  controller: 'the cluster id',
  gateway: 'a name for the gateway deployment (replicas may share it)',
  'control-plane': 'a name for the control plane deployment',
};

export interface NatsRolePermissions {
  publish: string[];
  subscribe: string[];
  /**
   * May answer the requests it receives (NATS `allow_responses`: one reply per request, on the
   * reply subject the requester chose). No role may publish or subscribe `_INBOX.>` wholesale.
   */
  respond: boolean;
  /** Prefix of this user's own reply subjects, for the roles that make requests. */
  inboxPrefix?: string;
}

/** The permissions of `role` for the user named `userName` (or the template, by default). */
export function natsRolePermissions(role: NatsRole, userName: string = NATS_USER_NAME_TEMPLATE): NatsRolePermissions {
  const n = userName;
  switch (role) {
    case 'runner':
      return {
        publish: [subjects.runnerHeartbeat(n), subjects.sandboxState(n), subjects.allStreamsFromRunner(n)],
        subscribe: [subjects.runnerRpcAll(n), subjects.allStreamsToRunner(n)],
        respond: true,
      };
    case 'controller': {
      const inboxPrefix = subjects.inboxPrefix('controller', n);
      return {
        publish: [subjects.installReport(n), subjects.runnerCredentialsRequest(n)],
        subscribe: [subjects.allRunnerHeartbeats(), `${inboxPrefix}.>`],
        respond: false,
        inboxPrefix,
      };
    }
    case 'gateway': {
      const inboxPrefix = subjects.inboxPrefix('gateway', n);
      return {
        publish: [subjects.allRunnerRpcs(), subjects.allStreamsToRunner('*'), subjects.sandboxRowChanged(), subjects.secretsResolve()],
        subscribe: [subjects.allRunnerHeartbeats(), subjects.allSandboxStates(), subjects.allStreamsFromRunner('*'), subjects.sandboxRowChanged(), `${inboxPrefix}.>`],
        respond: false,
        inboxPrefix,
      };
    }
    case 'control-plane':
      return {
        publish: [subjects.allRunnerConnections()],
        subscribe: [subjects.allRunnerHeartbeats(), subjects.allInstallReports(), subjects.allRunnerCredentialsRequests(), subjects.secretsResolve()],
        respond: true,
      };
  }
}

/**
 * A NATS user name must be usable as one subject token: it is substituted into subjects, and a
 * name holding `.`, `*` or `>` would widen the permissions it lands in.
 */
export function isValidNatsUserName(name: string): boolean {
  return /^[A-Za-z0-9_-]{1,128}$/.test(name);
}
