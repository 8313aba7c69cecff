/**
 * A scheduler with the default plugins that matter for placement policy: NodeUnschedulable,
 * TaintToleration (NoSchedule/NoExecute), NodeAffinity (nodeSelector and required node affinity).
 * Unschedulable pods get the real `PodScheduled=False/Unschedulable` condition and message.
 */
import { bindPod } from '../store/binding';
import { matchesLabelSelectorObject } from '../store/selectors';
import { mustFindByKind } from '../store/resources';
import type { ObjectStore, StoreEvent } from '../store/store';
import { isRecord, nowTimestamp, type Condition, type KubeObject, type PodSpec, type Taint, type Toleration } from '../types';
import { recordEvent } from './events';
import { WorkQueue } from './queue';

export function tolerates(tolerations: readonly Toleration[], taint: Taint): boolean {
  return tolerations.some((t) => {
    if (t.effect && t.effect !== taint.effect) return false;
    if (!t.key) return t.operator === 'Exists';
    if (t.key !== taint.key) return false;
    return t.operator === 'Exists' || (t.value ?? '') === (taint.value ?? '');
  });
}

/**
 * `Gt`/`Lt` of a node selector requirement: the label's value and the one given value compare as
 * integers; a node without the label, or with a value that is no integer, does not match.
 */
function matchesNumericRequirement(e: Record<string, unknown>, labels: Record<string, string>): boolean {
  const INTEGER = /^-?\d+$/;
  const actual = typeof e.key === 'string' ? labels[e.key] : undefined;
  const given = Array.isArray(e.values) && e.values.length === 1 ? String(e.values[0]) : undefined;
  if (actual === undefined || given === undefined || !INTEGER.test(actual) || !INTEGER.test(given)) return false;
  return e.operator === 'Gt' ? BigInt(actual) > BigInt(given) : BigInt(actual) < BigInt(given);
}

function matchesNodeSelectorTerm(term: unknown, labels: Record<string, string>): boolean {
  if (!isRecord(term)) return false;
  const exprs = (Array.isArray(term.matchExpressions) ? term.matchExpressions : []) as unknown[];
  const numeric = exprs.filter((e): e is Record<string, unknown> => isRecord(e) && (e.operator === 'Gt' || e.operator === 'Lt'));
  const rest = exprs.filter((e) => !numeric.includes(e as Record<string, unknown>));
  return numeric.every((e) => matchesNumericRequirement(e, labels)) && matchesLabelSelectorObject({ matchExpressions: rest }, labels);
}

function affinityMatches(affinity: unknown, labels: Record<string, string>): boolean {
  if (!isRecord(affinity) || !isRecord(affinity.nodeAffinity)) return true;
  const required = affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution;
  if (!isRecord(required) || !Array.isArray(required.nodeSelectorTerms)) return true;
  return (required.nodeSelectorTerms as unknown[]).some((t) => matchesNodeSelectorTerm(t, labels));
}

/** Why a node cannot take a pod (the first failing filter, worded as the scheduler's), or undefined. */
export function filterNode(spec: PodSpec, node: KubeObject): string | undefined {
  const nodeSpec = isRecord(node.spec) ? node.spec : {};
  const tolerations = spec.tolerations ?? [];
  if (nodeSpec.unschedulable === true && !tolerates(tolerations, { key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' })) {
    return 'node(s) were unschedulable';
  }
  const taints = Array.isArray(nodeSpec.taints) ? (nodeSpec.taints as Taint[]) : [];
  const untolerated = taints.find((t) => (t.effect === 'NoSchedule' || t.effect === 'NoExecute') && !tolerates(tolerations, t));
  if (untolerated) return `node(s) had untolerated taint {${untolerated.key}: ${untolerated.value ?? ''}}`;
  const labels = node.metadata.labels ?? {};
  const selectorOk = Object.entries(spec.nodeSelector ?? {}).every(([k, v]) => labels[k] === v);
  if (!selectorOk || !affinityMatches(spec.affinity, labels)) return "node(s) didn't match Pod's node affinity/selector";
  return undefined;
}

/** `0/3 nodes are available: 1 node(s) had untolerated taint {workload: gpu}, 2 node(s) didn't match …` */
export function unschedulableMessage(total: number, reasons: string[]): string {
  const counts = new Map<string, number>();
  for (const r of reasons) counts.set(r, (counts.get(r) ?? 0) + 1);
  const parts = [...counts].map(([r, n]) => `${n} ${r}`).sort();
  const head = total === 0 ? '0/0 nodes are available: no nodes available to schedule pods.' : `0/${total} nodes are available: ${parts.join(', ')}.`;
  return `${head} preemption: 0/${total} nodes are available: ${total} Preemption is not helpful for scheduling.`;
}

export class Scheduler {
  private readonly podType = mustFindByKind('v1', 'Pod');
  private readonly nodeType = mustFindByKind('v1', 'Node');
  private readonly queue = new WorkQueue('scheduler', (key) => this.schedule(key));
  private readonly unsubscribe: () => void;

  constructor(private readonly store: ObjectStore) {
    this.unsubscribe = store.subscribe((e) => this.onEvent(e));
    for (const p of store.peekList(this.podType)) this.queue.add(`${p.metadata.namespace ?? ''}/${p.metadata.name ?? ''}`);
  }

  private onEvent(e: StoreEvent): void {
    if (e.resource === this.podType && e.type !== 'DELETED') {
      const spec = e.object.spec as PodSpec;
      if (!spec.nodeName) this.queue.add(`${e.object.metadata.namespace ?? ''}/${e.object.metadata.name ?? ''}`);
    } else if (e.resource === this.nodeType || (e.resource === this.podType && e.type === 'DELETED')) {
      // Node changes (and freed capacity) can make waiting pods schedulable.
      for (const p of this.store.peekList(this.podType)) {
        if (!(p.spec as PodSpec).nodeName) this.queue.add(`${p.metadata.namespace ?? ''}/${p.metadata.name ?? ''}`);
      }
    }
  }

  private schedule(key: string): void {
    const i = key.indexOf('/');
    const ns = key.slice(0, i);
    const name = key.slice(i + 1);
    const pod = this.store.peek(this.podType, ns, name);
    if (!pod || pod.metadata.deletionTimestamp) return;
    const spec = pod.spec as PodSpec;
    if (spec.nodeName || (spec.schedulerName ?? 'default-scheduler') !== 'default-scheduler') return;
    const nodes = this.store.peekList(this.nodeType);
    const reasons: string[] = [];
    const feasible: KubeObject[] = [];
    for (const n of nodes) {
      const why = filterNode(spec, n);
      if (why) reasons.push(why);
      else feasible.push(n);
    }
    if (feasible.length === 0) {
      this.markUnschedulable(pod, unschedulableMessage(nodes.length, reasons));
      return;
    }
    // Spread: the feasible node running the fewest pods.
    const load = new Map<string, number>();
    for (const p of this.store.peekList(this.podType)) {
      const n = (p.spec as PodSpec).nodeName;
      if (n) load.set(n, (load.get(n) ?? 0) + 1);
    }
    feasible.sort((a, b) => (load.get(a.metadata.name ?? '') ?? 0) - (load.get(b.metadata.name ?? '') ?? 0));
    const target = feasible[0]?.metadata.name ?? '';
    bindPod(this.store, this.podType, ns, name, target, { manager: 'default-scheduler' });
    this.store.update(this.podType, ns, name, (cur) => {
      const status = isRecord(cur.status) ? cur.status : {};
      const conditions = (Array.isArray(status.conditions) ? (status.conditions as Condition[]) : []).filter((c) => c.type !== 'PodScheduled');
      conditions.push({ type: 'PodScheduled', status: 'True', lastProbeTime: null, lastTransitionTime: nowTimestamp() });
      return { ...cur, status: { ...status, conditions } };
    }, { manager: 'default-scheduler', subresource: 'status' });
    recordEvent(this.store, 'default-scheduler', pod, 'Normal', 'Scheduled', `Successfully assigned ${ns}/${name} to ${target}`);
  }

  private markUnschedulable(pod: KubeObject, message: string): void {
    const status = isRecord(pod.status) ? pod.status : {};
    const conditions = Array.isArray(status.conditions) ? (status.conditions as Condition[]) : [];
    const existing = conditions.find((c) => c.type === 'PodScheduled');
    if (existing?.status === 'False' && existing.message === message) return;
    const ns = pod.metadata.namespace ?? '';
    const name = pod.metadata.name ?? '';
    this.store.update(this.podType, ns, name, (cur) => {
      const s = isRecord(cur.status) ? cur.status : {};
      const conds = (Array.isArray(s.conditions) ? (s.conditions as Condition[]) : []).filter((c) => c.type !== 'PodScheduled');
      conds.push({ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message, lastProbeTime: null, lastTransitionTime: nowTimestamp() });
      return { ...cur, status: { ...s, conditions: conds } };
    }, { manager: 'default-scheduler', subresource: 'status' });
    recordEvent(this.store, 'default-scheduler', pod, 'Warning', 'FailedScheduling', message);
  }

  close(): void {
    this.unsubscribe();
    this.queue.close();
  }
}
