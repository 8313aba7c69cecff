import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError, expired, type StatusBody } from '../store/errors';
import { apiVersionOf, resourceKey, type ResourceType } from '../store/resources';
import { matchesFields, matchesLabels, type FieldSelector, type LabelSelector } from '../store/selectors';
import type { ObjectStore, StoreEvent, WatchEventType } from '../store/store';
import type { KubeObject } from '../types';

export interface WatchRequest {
  resource: ResourceType;
  namespace?: string;
  name?: string;
  labels: LabelSelector;
  fields: FieldSelector;
  resourceVersion: string;
  allowBookmarks: boolean;
  timeoutSeconds?: number;
}

interface OpenWatch {
  res: ServerResponse;
  close(status?: StatusBody): void;
}

/**
 * Streams watch events as the API server does: 200 with headers flushed at once, then
 * newline-delimited `{"type":…,"object":…}`; a resume from a compacted resourceVersion gets an
 * `ERROR` event carrying a 410 `Status` and the stream ends.
 */
export class WatchHub {
  private readonly open = new Set<OpenWatch>();

  constructor(
    private readonly store: ObjectStore,
    private readonly bookmarkIntervalMs: number,
  ) {}

  get openCount(): number {
    return this.open.size;
  }

  serve(req: IncomingMessage, res: ServerResponse, w: WatchRequest): void {
    res.writeHead(200, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked', 'Cache-Control': 'no-cache, private' });
    res.flushHeaders();
    const matches = (o: KubeObject | undefined): boolean =>
      o !== undefined &&
      (!w.resource.namespaced || !w.namespace || o.metadata.namespace === w.namespace) &&
      (!w.name || o.metadata.name === w.name) &&
      matchesLabels(w.labels, o.metadata.labels) &&
      matchesFields(w.fields, o);
    const write = (type: WatchEventType | 'BOOKMARK' | 'ERROR', object: unknown): void => {
      res.write(`${JSON.stringify({ type, object })}\n`);
    };
    const key = resourceKey(w.resource);
    const translate = (e: StoreEvent): void => {
      if (resourceKey(e.resource) !== key) return;
      const now = matches(e.object);
      const before = e.previous !== undefined && matches(e.previous);
      if (e.type === 'DELETED') {
        if (now || before) write('DELETED', e.object);
      } else if (e.type === 'ADDED') {
        if (now) write('ADDED', e.object);
      } else if (now && before) write('MODIFIED', e.object);
      else if (now) write('ADDED', e.object);
      else if (before) write('DELETED', e.object);
    };

    let unsubscribe = (): void => undefined;
    const timers: NodeJS.Timeout[] = [];
    const entry: OpenWatch = {
      res,
      close: (status) => {
        if (!this.open.delete(entry)) return;
        unsubscribe();
        for (const t of timers) clearTimeout(t);
        if (status && !res.writableEnded) write('ERROR', status);
        res.end();
      },
    };
    this.open.add(entry);
    req.on('close', () => entry.close());

    const rv = w.resourceVersion;
    if (!rv || rv === '0') {
      for (const o of this.store.peekList(w.resource, w.namespace)) if (matches(o)) write('ADDED', o);
    } else {
      let backlog: StoreEvent[];
      try {
        backlog = this.store.eventsAfter(Number(rv));
      } catch (e) {
        entry.close(e instanceof ApiError ? e.status : undefined);
        return;
      }
      for (const e of backlog) translate(e);
    }
    unsubscribe = this.store.subscribe(translate);
    if (w.allowBookmarks) {
      const apiVersion = apiVersionOf(w.resource);
      const tick = (): void => {
        write('BOOKMARK', { kind: w.resource.kind, apiVersion, metadata: { resourceVersion: String(this.store.currentRv()) } });
        timers[0] = setTimeout(tick, this.bookmarkIntervalMs);
      };
      timers[0] = setTimeout(tick, this.bookmarkIntervalMs);
    }
    if (w.timeoutSeconds !== undefined && w.timeoutSeconds > 0) timers[1] = setTimeout(() => entry.close(), w.timeoutSeconds * 1000);
  }

  /** Ends every open watch with a 410 ERROR event, the way a compacted history surfaces. */
  expireAll(): void {
    const status = expired('The resourceVersion for the provided watch is too old.').status;
    for (const w of [...this.open]) w.close(status);
  }

  closeAll(): void {
    for (const w of [...this.open]) w.close();
  }
}
