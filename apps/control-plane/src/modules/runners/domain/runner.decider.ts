/**
 * The managed-runner aggregate (one stream per runner, `managed_runner-<uid>`).
 *
 * Invariants:
 * - A runner is created once; everything else needs it to exist (`not_found` otherwise) and, except
 *   status reports and deletion itself, to not be deleting (`failed_precondition`).
 * - The policy is replaced only by a writer that read the current policy revision: the etag it
 *   sends must be the current one (`failed_precondition`, nothing recorded), so a concurrent edit
 *   is reported instead of silently overwritten. The etag moves only when the policy does.
 * - `targetRevision` only rises, and only to a newer release of the runner's channel.
 * - Install reports come from the cluster's controller; a report with a fencing token older than
 *   the newest one recorded is stale and ignored. DELETING is set only by the control plane and left
 *   only by a `gone` report, which removes the runner.
 * - Connection status is recorded on transitions only.
 *
 * Refusals throw `PaddockError` and record nothing: a refused command must leave the stream exactly
 * as it was (CP-1 counts events). Commands that change nothing return no events.
 */
import { PaddockError } from '@paddock/contracts';
import type { RunnerEvent, RunnerInstallStatus } from '@paddock/contracts';
import type { RunnerCommand, ProfileTemplateVerdict } from './runner.commands';
import { policyEtag } from './etag';
import { initialState, type LiveRunner, type RunnerState } from './runner.state';
import { evolve } from './runner.evolve';
import { sameJson } from './same-json';

export { initialState, evolve };
export type { RunnerState };

export function decide(command: RunnerCommand, state: RunnerState): RunnerEvent[] {
  switch (command.type) {
    case 'CreateRunner':
      return decideCreate(command.data, state);
    case 'UpdateRunnerSettings':
      return decideUpdateSettings(command.data, state);
    case 'RequestRunnerUpdate':
      return decideRequestUpdate(command.data, state);
    case 'ApplyInstallReport':
      return decideInstallReport(command.data, state);
    case 'RecordRunnerConnection':
      return decideConnection(command.data, state);
    case 'RequestRunnerDeletion':
      return decideDeletion(command.data, state);
    case 'UpdateLegacyProfileSettings':
      return decideLegacy(command.data, state);
  }
}

function notFound(runnerRef: string): PaddockError {
  return new PaddockError('not_found', `managed runner ${runnerRef} not found`);
}

/** Rule: mutations other than status reports and deletion need a runner that is not deleting. */
function requireMutable(state: RunnerState, runnerRef: string): LiveRunner {
  if (state.status === 'Absent' || state.status === 'Removed') throw notFound(runnerRef);
  if (state.status === 'Deleting') {
    throw new PaddockError('failed_precondition', `managed runner ${state.runnerId} is being deleted; it can no longer be changed`, {
      violations: [{ field: 'install_status', rule: 'must not be RUNNER_INSTALL_STATUS_DELETING', description: 'the runner is being deleted' }],
    });
  }
  return state;
}

function decideCreate(data: Extract<RunnerCommand, { type: 'CreateRunner' }>['data'], state: RunnerState): RunnerEvent[] {
  // Rule: a stream is created once (uids are fresh, so this only guards a replayed command).
  if (state.status !== 'Absent') {
    throw new PaddockError('already_exists', `managed runner ${data.runnerId} already exists`, { reason: 'PADDOCK_RUNNER_ID_TAKEN' });
  }
  return [
    {
      type: 'RunnerCreated',
      data: {
        uid: data.uid,
        organizationId: data.organizationId,
        runnerId: data.runnerId,
        zone: data.zone,
        clusterId: data.cluster.id,
        clusterName: data.cluster.name,
        runnerGroupId: data.runnerGroupId,
        displayName: data.displayName,
        spec: data.spec,
        policy: data.policy,
        policyRevision: 1,
        release: data.release,
        createdAt: data.now.toISOString(),
      },
    },
  ];
}

function decideUpdateSettings(
  data: Extract<RunnerCommand, { type: 'UpdateRunnerSettings' }>['data'],
  state: RunnerState,
): RunnerEvent[] {
  const runner = requireMutable(state, data.runnerRef);
  const events: RunnerEvent[] = [];
  const at = data.now.toISOString();

  if (data.policy) {
    const { document, etag, explicit } = data.policy;
    const current = policyEtag(runner.uid, runner.policyRevision);
    // Rule: optimistic concurrency on the policy. A stale etag refuses the whole request.
    if (etag !== undefined && etag !== current) {
      throw new PaddockError('failed_precondition', 'managed_runner.etag is stale; reload the runner and retry', {
        reason: 'PADDOCK_ETAG_STALE',
        violations: [{ field: 'etag', rule: 'must equal the etag of the current policy revision', description: 'the policy changed since it was read' }],
      });
    }
    const changes = !sameJson(document, runner.policy);
    // Rule: the policy cannot be removed through an update, only replaced ({} is the empty posture).
    if (document === null && runner.policy !== null) {
      throw new PaddockError('invalid_argument', 'policy cannot be removed; send the whole policy document ({} is the empty posture)', {
        reason: 'PADDOCK_VALIDATION_FAILED',
        violations: [{ field: 'policy', rule: 'required', description: 'removing the policy through an update is rejected' }],
      });
    }
    // Rule: a policy write names the revision it is based on. An explicit `policy` mask always
    // needs it; a whole-resource replace needs it only when the policy actually changes.
    if (etag === undefined && (explicit || changes)) {
      throw new PaddockError('invalid_argument', 'managed_runner.etag is required to replace the policy; send the etag of the read the policy is based on', {
        reason: 'PADDOCK_ETAG_REQUIRED',
        violations: [{ field: 'etag', rule: 'required with policy', description: 'a policy replacement must carry the etag of the read it is based on' }],
      });
    }
    if (changes && document !== null) {
      events.push({ type: 'RunnerPolicyReplaced', data: { policy: document, policyRevision: runner.policyRevision + 1, updatedAt: at } });
    }
  }

  const s = data.settings;
  const changed: Extract<RunnerEvent, { type: 'RunnerSettingsUpdated' }>['data'] = { paths: data.paths, updatedAt: at };
  let any = false;
  if (s.displayName !== undefined && s.displayName !== runner.displayName) {
    changed.displayName = s.displayName;
    any = true;
  }
  if (s.zone !== undefined && s.zone !== runner.zone) {
    changed.zone = s.zone;
    any = true;
  }
  if (s.runnerGroupId !== undefined && s.runnerGroupId !== runner.runnerGroupId) {
    changed.runnerGroupId = s.runnerGroupId;
    any = true;
  }
  if (s.spec !== undefined) {
    const spec = { ...runner.spec, ...s.spec };
    if (!sameJson(spec, runner.spec)) {
      changed.spec = spec;
      any = true;
    }
  }
  if (any) events.unshift({ type: 'RunnerSettingsUpdated', data: changed });
  return events;
}

function decideRequestUpdate(
  data: Extract<RunnerCommand, { type: 'RequestRunnerUpdate' }>['data'],
  state: RunnerState,
): RunnerEvent[] {
  const runner = requireMutable(state, data.runnerRef);
  // Rule: targetRevision only rises, to the newest release of the runner's channel.
  if (data.latest.revision <= runner.target.revision) {
    throw new PaddockError(
      'failed_precondition',
      `no update available for managed runner ${runner.runnerId}: it already targets revision ${runner.target.revision} (${runner.target.version}), the latest on ${runner.spec.releaseChannel}`,
      {
        violations: [
          { field: 'update_available', rule: 'must be true', description: `latest revision on ${runner.spec.releaseChannel} is ${data.latest.revision}` },
        ],
        metadata: { targetRevision: String(runner.target.revision), latestRevision: String(data.latest.revision) },
      },
    );
  }
  return [
    {
      type: 'RunnerUpdateRequested',
      data: { release: data.latest, previousTargetRevision: runner.target.revision, trigger: data.trigger, requestedAt: data.now.toISOString() },
    },
  ];
}

const REPORTABLE_INSTALL_STATUSES: readonly RunnerInstallStatus[] = [
  'RUNNER_INSTALL_STATUS_PENDING',
  'RUNNER_INSTALL_STATUS_PROVISIONING',
  'RUNNER_INSTALL_STATUS_READY',
  'RUNNER_INSTALL_STATUS_FAILED',
];

function decideInstallReport(
  data: Extract<RunnerCommand, { type: 'ApplyInstallReport' }>['data'],
  state: RunnerState,
): RunnerEvent[] {
  const { report } = data;
  // A late report about a runner that is gone, or from another cluster's controller, is ignored.
  if (state.status === 'Absent' || state.status === 'Removed') return [];
  if (report.clusterId !== state.clusterId) return [];
  // Rule: fencing. A deposed controller's report (older lease generation) must not win.
  if (report.fencingToken < state.lastFencingToken) return [];
  const fence = { controllerId: report.controllerId, fencingToken: report.fencingToken, reportedAt: report.reportedAt };

  if (state.status === 'Deleting') {
    // Rule: DELETING is left only by `gone`, which removes the runner.
    return report.gone ? [{ type: 'RunnerRemoved', data: { controllerId: fence.controllerId, fencingToken: fence.fencingToken, removedAt: data.now.toISOString() } }] : [];
  }
  // `gone` for a runner nobody asked to delete is a controller bug; the runner stays.
  if (report.gone) return [];

  const events: RunnerEvent[] = [];
  if (REPORTABLE_INSTALL_STATUSES.includes(report.installStatus)) {
    // installError only accompanies FAILED; moving back to PROVISIONING or READY clears it.
    const installError = report.installStatus === 'RUNNER_INSTALL_STATUS_FAILED' ? (report.installError ?? null) : null;
    if (report.installStatus !== state.installStatus || !sameJson(installError, state.installError)) {
      events.push({ type: 'RunnerInstallStatusChanged', data: { installStatus: report.installStatus, installError, ...fence } });
    }
  }
  if (report.activeRevision !== undefined && report.activeRevision !== state.activeRevision) {
    events.push({ type: 'RunnerRevisionActivated', data: { activeRevision: report.activeRevision, ...fence } });
  }
  return events;
}

function decideConnection(
  data: Extract<RunnerCommand, { type: 'RecordRunnerConnection' }>['data'],
  state: RunnerState,
): RunnerEvent[] {
  if (state.status === 'Absent' || state.status === 'Removed') return [];
  // Rule: transitions only; a steady heartbeat records nothing.
  if (data.status === state.connectionStatus) return [];
  return [{ type: 'RunnerConnectionChanged', data: { connectionStatus: data.status, at: data.at.toISOString() } }];
}

function decideDeletion(
  data: Extract<RunnerCommand, { type: 'RequestRunnerDeletion' }>['data'],
  state: RunnerState,
): RunnerEvent[] {
  if (state.status === 'Absent' || state.status === 'Removed') throw notFound(data.runnerRef);
  // Deleting twice is the same request.
  if (state.status === 'Deleting') return [];
  return [{ type: 'RunnerDeletionRequested', data: { requestedAt: data.now.toISOString() } }];
}

/**
 * The seed's refusal, in the exact format of `checkProfileTemplate`:
 * `profile_bindings[7]: template "<id>" contains privileged pod-spec fields [a b]; runner does not have allow_privileged_profile_annotations=true`.
 */
export function privilegedTemplateMessage(index: number, verdict: ProfileTemplateVerdict): string {
  return `profile_bindings[${index}]: template "${verdict.profileTemplateId}" contains privileged pod-spec fields [${verdict.privilegedFields.join(' ')}]; runner does not have allow_privileged_profile_annotations=true`;
}

function decideLegacy(
  data: Extract<RunnerCommand, { type: 'UpdateLegacyProfileSettings' }>['data'],
  state: RunnerState,
): RunnerEvent[] {
  const runner = requireMutable(state, data.runnerRef);
  const at = data.now.toISOString();
  const allow = data.allowPrivilegedProfileAnnotations ?? runner.allowPrivilegedProfileAnnotations;
  const bindings = data.profileBindings ?? runner.profileBindings;

  if (data.profileBindings) {
    // Rule (v1beta2): at least one binding, exactly one default.
    const defaults = data.profileBindings.filter((b) => b.isDefault === true).length;
    if (data.profileBindings.length === 0 || defaults !== 1) {
      throw new PaddockError('invalid_argument', 'profile_bindings must hold at least one binding and exactly one with is_default=true', {
        reason: 'PADDOCK_VALIDATION_FAILED',
        violations: [{ field: 'profile_bindings', rule: 'exactly one is_default binding', description: `${defaults} default bindings in ${data.profileBindings.length}` }],
      });
    }
  }
  // Rule: every bound template with a privileged posture needs the runner's flag.
  if (!allow) {
    for (const [i, b] of bindings.entries()) {
      const verdict = data.templateVerdicts.find((v) => v.profileTemplateId === b.profileTemplateId);
      if (verdict && verdict.privilegedFields.length > 0) {
        throw new PaddockError('permission_denied', privilegedTemplateMessage(i, verdict), {
          reason: 'PADDOCK_PRIVILEGED_TEMPLATE',
          violations: [
            {
              field: `profile_bindings[${i}]`,
              rule: 'privileged templates need allow_privileged_profile_annotations=true',
              description: verdict.privilegedFields.join(' '),
            },
          ],
        });
      }
    }
  }
  const events: RunnerEvent[] = [];
  if (allow !== runner.allowPrivilegedProfileAnnotations) {
    events.push({ type: 'RunnerPrivilegedProfilePostureChanged', data: { allowPrivilegedProfileAnnotations: allow, updatedAt: at } });
  }
  if (data.profileBindings && !sameJson(data.profileBindings, runner.profileBindings)) {
    events.push({ type: 'RunnerProfileBindingsReplaced', data: { profileBindings: data.profileBindings, updatedAt: at } });
  }
  return events;
}
