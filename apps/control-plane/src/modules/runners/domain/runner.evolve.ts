import type { RunnerEvent } from '@paddock/contracts';
import { INITIAL_CONNECTION_STATUS_VALUE } from './runner.defaults';
import type { RunnerState } from './runner.state';

/** Folds one fact into the state. Never throws, never validates. */
export function evolve(state: RunnerState, event: RunnerEvent): RunnerState {
  if (event.type === 'RunnerCreated') {
    const d = event.data;
    return {
      status: 'Live',
      uid: d.uid,
      organizationId: d.organizationId,
      runnerId: d.runnerId,
      zone: d.zone,
      clusterId: d.clusterId,
      clusterName: d.clusterName,
      runnerGroupId: d.runnerGroupId,
      displayName: d.displayName,
      spec: d.spec,
      policy: d.policy,
      policyRevision: d.policyRevision,
      installStatus: 'RUNNER_INSTALL_STATUS_PENDING',
      installError: null,
      connectionStatus: INITIAL_CONNECTION_STATUS_VALUE,
      activeRevision: 0,
      target: d.release,
      allowPrivilegedProfileAnnotations: false,
      profileBindings: [],
      lastFencingToken: 0,
      createdAt: d.createdAt,
      updatedAt: d.createdAt,
    };
  }
  if (state.status !== 'Live' && state.status !== 'Deleting') return state;
  switch (event.type) {
    case 'RunnerSettingsUpdated': {
      const d = event.data;
      return {
        ...state,
        ...(d.displayName !== undefined ? { displayName: d.displayName } : {}),
        ...(d.zone !== undefined ? { zone: d.zone } : {}),
        ...(d.runnerGroupId !== undefined ? { runnerGroupId: d.runnerGroupId } : {}),
        ...(d.spec !== undefined ? { spec: d.spec } : {}),
        updatedAt: d.updatedAt,
      };
    }
    case 'RunnerPolicyReplaced':
      return { ...state, policy: event.data.policy, policyRevision: event.data.policyRevision, updatedAt: event.data.updatedAt };
    case 'RunnerUpdateRequested':
      return { ...state, target: event.data.release, updatedAt: event.data.requestedAt };
    case 'RunnerInstallStatusChanged':
      return {
        ...state,
        installStatus: event.data.installStatus,
        installError: event.data.installError,
        lastFencingToken: Math.max(state.lastFencingToken, event.data.fencingToken),
        updatedAt: event.data.reportedAt,
      };
    case 'RunnerRevisionActivated':
      return {
        ...state,
        activeRevision: event.data.activeRevision,
        lastFencingToken: Math.max(state.lastFencingToken, event.data.fencingToken),
        updatedAt: event.data.reportedAt,
      };
    case 'RunnerConnectionChanged':
      // Connectivity is status, not configuration: updateTime does not move.
      return { ...state, connectionStatus: event.data.connectionStatus };
    case 'RunnerDeletionRequested':
      return { ...state, status: 'Deleting', installStatus: 'RUNNER_INSTALL_STATUS_DELETING', updatedAt: event.data.requestedAt };
    case 'RunnerRemoved':
      return { status: 'Removed', uid: state.uid, organizationId: state.organizationId, runnerId: state.runnerId, removedAt: event.data.removedAt };
    case 'RunnerPrivilegedProfilePostureChanged':
      return { ...state, allowPrivilegedProfileAnnotations: event.data.allowPrivilegedProfileAnnotations, updatedAt: event.data.updatedAt };
    case 'RunnerProfileBindingsReplaced':
      return { ...state, profileBindings: event.data.profileBindings, updatedAt: event.data.updatedAt };
  }
}
