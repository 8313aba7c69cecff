import type { RunnerEvent, RunnerFieldChange, RunnerRevision } from '@paddock/contracts';
import { policyEtag } from './etag';
import { evolve, initialState } from './runner.decider';
import type { RunnerState } from './runner.state';
import { sameJson } from './same-json';

/** The user-visible facets of a state, in API field names; what a revision diff compares. */
function facets(state: RunnerState): Record<string, unknown> {
  if (state.status === 'Absent') return {};
  if (state.status === 'Removed') return { installStatus: 'REMOVED' };
  return {
    displayName: state.displayName,
    identity: { runnerId: state.runnerId, zone: state.zone, clusterId: state.clusterId, clusterName: state.clusterName, runnerGroupId: state.runnerGroupId },
    spec: state.spec,
    policy: state.policy,
    installStatus: state.installStatus,
    installError: state.installError,
    connectionStatus: state.connectionStatus,
    activeRevision: state.activeRevision,
    targetRevision: state.target.revision,
    allowPrivilegedProfileAnnotations: state.allowPrivilegedProfileAnnotations,
    profileBindings: state.profileBindings,
  };
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Leaf-level differences (objects recurse; arrays and scalars compare whole). */
export function diffFields(before: unknown, after: unknown, path = '', out: RunnerFieldChange[] = []): RunnerFieldChange[] {
  if (sameJson(before, after)) return out;
  if (isPlainObject(before) && isPlainObject(after)) {
    const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
    for (const k of keys) diffFields(before[k], after[k], path ? `${path}.${k}` : k, out);
    return out;
  }
  out.push({ field: path || '(resource)', ...(before !== undefined ? { before } : {}), ...(after !== undefined ? { after } : {}) });
  return out;
}

export interface HistoryEvent {
  event: RunnerEvent;
  streamPosition: number;
  actor: string | undefined;
  createdAt: Date;
}

/**
 * The revision list of `GET .../revisions`: one entry per event, newest first, with the fields it
 * changed, who recorded it and the policy etag in force after it.
 */
export function revisionHistory(events: readonly HistoryEvent[]): RunnerRevision[] {
  let state = initialState();
  const out: RunnerRevision[] = [];
  for (const h of events) {
    const next = evolve(state, h.event);
    const uid = next.status === 'Absent' ? '' : next.uid;
    const revision = next.status === 'Live' || next.status === 'Deleting' ? next.policyRevision : state.status === 'Live' || state.status === 'Deleting' ? state.policyRevision : 1;
    out.push({
      revision: h.streamPosition,
      eventType: h.event.type,
      changes: diffFields(facets(state), facets(next)),
      actor: h.actor ?? null,
      time: h.createdAt.toISOString(),
      policyEtag: policyEtag(uid, revision),
    });
    state = next;
  }
  return out.reverse();
}
