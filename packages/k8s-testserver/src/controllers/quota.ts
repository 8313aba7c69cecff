/** Keeps `ResourceQuota.status.{hard,used}` current, like the resource quota controller. */
import { formatQuantity } from '../admission/quantity';
import { quotaUsage } from '../admission/pod-admission';
import { deepEqual } from '../store/list-semantics';
import { mustFindByKind } from '../store/resources';
import type { ObjectStore, StoreEvent } from '../store/store';
import { isRecord } from '../types';
import { WorkQueue } from './queue';

export class QuotaController {
  private readonly quotaType = mustFindByKind('v1', 'ResourceQuota');
  private readonly podType = mustFindByKind('v1', 'Pod');
  private readonly queue = new WorkQueue('resourcequota', (ns) => this.sync(ns));
  private readonly unsubscribe: () => void;

  constructor(private readonly store: ObjectStore) {
    this.unsubscribe = store.subscribe((e: StoreEvent) => {
      if (e.resource === this.podType || (e.resource === this.quotaType && e.type !== 'DELETED')) this.queue.add(e.object.metadata.namespace ?? '');
    });
  }

  private sync(ns: string): void {
    for (const q of this.store.peekList(this.quotaType, ns)) {
      const spec = isRecord(q.spec) ? q.spec : {};
      const hard = (isRecord(spec.hard) ? spec.hard : {}) as Record<string, string>;
      const usage = quotaUsage(this.store, ns, hard);
      const used: Record<string, string> = {};
      for (const [k, v] of Object.entries(usage)) used[k] = formatQuantity(k, v);
      const status = { hard, used };
      if (deepEqual(status, q.status)) continue;
      this.store.update(this.quotaType, ns, q.metadata.name ?? '', (cur) => ({ ...cur, status }), { manager: 'kube-controller-manager', subresource: 'status' });
    }
  }

  close(): void {
    this.unsubscribe();
    this.queue.close();
  }
}
