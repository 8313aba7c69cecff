import { mustFindByKind } from '../store/resources';
import type { ObjectStore } from '../store/store';
import { nowTimestamp, type KubeObject } from '../types';
import { randomSuffix } from '../store/names';

/** Records a core/v1 Event about an object, as kube components do (best effort). */
export function recordEvent(store: ObjectStore, component: string, about: KubeObject, type: 'Normal' | 'Warning', reason: string, message: string): void {
  const ns = about.metadata.namespace ?? 'default';
  const now = nowTimestamp();
  try {
    store.create(
      mustFindByKind('v1', 'Event'),
      {
        apiVersion: 'v1',
        kind: 'Event',
        metadata: { name: `${about.metadata.name ?? 'x'}.${Date.now().toString(16)}${randomSuffix(3)}`, namespace: ns },
        involvedObject: { apiVersion: about.apiVersion, kind: about.kind, name: about.metadata.name, namespace: about.metadata.namespace, uid: about.metadata.uid, resourceVersion: about.metadata.resourceVersion },
        reason,
        message,
        type,
        source: { component },
        firstTimestamp: now,
        lastTimestamp: now,
        count: 1,
        reportingComponent: component,
        reportingInstance: '',
      },
      { manager: component },
    );
  } catch {
    // namespace terminating or gone: the event is lost, as it would be
  }
}
