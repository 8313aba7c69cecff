import { conflict } from './errors';
import type { ResourceType } from './resources';
import type { ObjectStore, WriteContext } from './store';
import { isRecord, type KubeObject } from '../types';

/** Assigns a node to an unbound pod; a pod is bound at most once. */
export function bindPod(store: ObjectStore, podType: ResourceType, ns: string | undefined, name: string, node: string, ctx: WriteContext): KubeObject {
  return store.update(podType, ns, name, (cur) => {
    const spec = isRecord(cur.spec) ? cur.spec : {};
    if (typeof spec.nodeName === 'string' && spec.nodeName) throw conflict(podType, name, `pod ${name} is already assigned to node "${spec.nodeName}"`);
    return { ...cur, spec: { ...spec, nodeName: node } };
  }, ctx);
}
