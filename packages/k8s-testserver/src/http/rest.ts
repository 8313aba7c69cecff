import type { IncomingMessage, ServerResponse } from 'node:http';
import { parse as parseYaml } from 'yaml';
import { badRequest, conflict, methodNotAllowed, notFound, pathNotFound, unsupportedMediaType } from '../store/errors';
import { jsonPatch, mergePatch, strategicMergePatch } from '../store/patch';
import { apiVersionOf, hasStatusSubresource, type ResourceType } from '../store/resources';
import { matchesFields, matchesLabels, parseFieldSelector, parseLabelSelector } from '../store/selectors';
import { bindPod } from '../store/binding';
import type { DeleteOptions, ObjectStore, WriteContext } from '../store/store';
import { clone, isRecord, type KubeObject } from '../types';
import { parseJson, readBody, sendJson } from './respond';
import type { WatchHub } from './watch';

export interface ResourceRequest {
  req: IncomingMessage;
  res: ServerResponse;
  query: URLSearchParams;
  resource: ResourceType;
  namespace?: string;
  name?: string;
  subresource?: string;
  watchPath: boolean;
}

/** The default field manager is derived from the user agent, as the API server does. */
function managerOf(r: ResourceRequest): string {
  const explicit = r.query.get('fieldManager');
  if (explicit) return explicit;
  const ua = r.req.headers['user-agent'] ?? 'unknown';
  return ua.split('/')[0] ?? 'unknown';
}

const writeContext = (r: ResourceRequest, subresource?: string): WriteContext => ({
  manager: managerOf(r),
  ...(subresource ? { subresource } : {}),
  ...(r.query.getAll('dryRun').includes('All') ? { dryRun: true } : {}),
});

/** Objects in a list omit kind and apiVersion, like the real server's typed lists. */
const listItem = (o: KubeObject): Record<string, unknown> => {
  const { apiVersion: _a, kind: _k, ...rest } = o;
  return rest;
};

interface ContinueToken {
  after: string;
}

export class RestHandler {
  constructor(
    private readonly store: ObjectStore,
    private readonly watches: WatchHub,
  ) {}

  async handle(r: ResourceRequest): Promise<void> {
    const method = r.req.method ?? 'GET';
    const { subresource } = r;
    if (subresource && subresource !== 'status' && subresource !== 'binding' && subresource !== 'scale') throw pathNotFound(r.req.url ?? '');
    if (!r.name) {
      if (subresource) throw pathNotFound(r.req.url ?? '');
      if (method === 'GET') return this.listOrWatch(r);
      if (method === 'POST') return this.create(r);
      if (method === 'DELETE') return this.deleteCollection(r);
      throw methodNotAllowed();
    }
    if (subresource === 'binding') {
      if (method !== 'POST') throw methodNotAllowed();
      return this.bind(r);
    }
    if (subresource === 'scale') return this.scale(r, method);
    if (method === 'GET') return this.read(r);
    if (method === 'PUT') return this.replace(r);
    if (method === 'PATCH') return this.patch(r);
    if (method === 'DELETE' && !subresource) return this.delete(r);
    throw methodNotAllowed();
  }

  private read(r: ResourceRequest): void {
    const obj = this.store.peek(r.resource, r.namespace, r.name ?? '');
    if (!obj) throw notFound(r.resource, r.name ?? '');
    sendJson(r.res, 200, obj);
  }

  private listOrWatch(r: ResourceRequest): void {
    const labels = parseLabelSelector(r.query.get('labelSelector'));
    const fields = parseFieldSelector(r.query.get('fieldSelector'));
    if (r.watchPath || r.query.get('watch') === 'true' || r.query.get('watch') === '1') {
      const timeout = r.query.get('timeoutSeconds');
      this.watches.serve(r.req, r.res, {
        resource: r.resource,
        ...(r.namespace ? { namespace: r.namespace } : {}),
        labels,
        fields,
        resourceVersion: r.query.get('resourceVersion') ?? '',
        allowBookmarks: r.query.get('allowWatchBookmarks') === 'true',
        ...(timeout ? { timeoutSeconds: Number(timeout) } : {}),
      });
      return;
    }
    let items = this.store.peekList(r.resource, r.namespace).filter((o) => matchesLabels(labels, o.metadata.labels) && matchesFields(fields, o));
    const cont = r.query.get('continue');
    if (cont) {
      let token: ContinueToken;
      try {
        token = JSON.parse(Buffer.from(cont, 'base64url').toString('utf8')) as ContinueToken;
      } catch {
        throw badRequest('continue key is not valid');
      }
      items = items.filter((o) => `${o.metadata.namespace ?? ''}/${o.metadata.name ?? ''}` > token.after);
    }
    const limit = Number(r.query.get('limit') ?? '0');
    const metadata: Record<string, unknown> = { resourceVersion: String(this.store.currentRv()) };
    if (limit > 0 && items.length > limit) {
      const last = items[limit - 1];
      metadata.continue = Buffer.from(JSON.stringify({ after: `${last?.metadata.namespace ?? ''}/${last?.metadata.name ?? ''}` })).toString('base64url');
      metadata.remainingItemCount = items.length - limit;
      items = items.slice(0, limit);
    }
    sendJson(r.res, 200, { kind: `${r.resource.kind}List`, apiVersion: apiVersionOf(r.resource), metadata, items: items.map(listItem) });
  }

  private async bodyObject(r: ResourceRequest): Promise<KubeObject> {
    const body = parseJson(await readBody(r.req));
    if (!isRecord(body)) throw badRequest('Object \'Kind\' is missing in request body');
    return this.normalize(r, body);
  }

  private normalize(r: ResourceRequest, body: Record<string, unknown>): KubeObject {
    const expected = apiVersionOf(r.resource);
    const apiVersion = typeof body.apiVersion === 'string' && body.apiVersion ? body.apiVersion : expected;
    const kind = typeof body.kind === 'string' && body.kind ? body.kind : r.resource.kind;
    if (apiVersion !== expected) throw badRequest(`the API version in the data (${apiVersion}) does not match the expected API version (${expected})`);
    if (kind !== r.resource.kind) throw badRequest(`the kind in the data (${kind}) does not match the expected kind (${r.resource.kind})`);
    const metadata = (isRecord(body.metadata) ? { ...body.metadata } : {}) as KubeObject['metadata'];
    if (r.resource.namespaced) {
      if (metadata.namespace && metadata.namespace !== r.namespace) throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
      metadata.namespace = r.namespace;
    }
    return { ...body, apiVersion, kind, metadata };
  }

  private async create(r: ResourceRequest): Promise<void> {
    if (r.resource.namespaced && !r.namespace) throw methodNotAllowed();
    const obj = await this.bodyObject(r);
    sendJson(r.res, 201, this.store.create(r.resource, obj, writeContext(r)));
  }

  private async replace(r: ResourceRequest): Promise<void> {
    const obj = await this.bodyObject(r);
    if (obj.metadata.name !== r.name) throw badRequest(`the name of the object (${obj.metadata.name ?? ''}) does not match the name on the URL (${r.name ?? ''})`);
    const subresource = r.subresource === 'status' ? 'status' : undefined;
    const updated = this.store.update(r.resource, r.namespace, r.name ?? '', (cur) => {
      const next = clone(obj);
      // A PUT without resourceVersion is an unconditional update.
      if (!next.metadata.resourceVersion) next.metadata.resourceVersion = cur.metadata.resourceVersion;
      return next;
    }, writeContext(r, subresource));
    sendJson(r.res, 200, updated);
  }

  private async patch(r: ResourceRequest): Promise<void> {
    const contentType = (r.req.headers['content-type'] ?? '').split(';')[0]?.trim() ?? '';
    const text = await readBody(r.req);
    const subresource = r.subresource === 'status' ? 'status' : undefined;
    const name = r.name ?? '';
    if (contentType === 'application/apply-patch+yaml' || contentType === 'application/apply-patch+json') {
      const manager = r.query.get('fieldManager');
      if (!manager) throw badRequest('PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch');
      let parsed: unknown;
      try {
        parsed = parseYaml(text) as unknown;
      } catch (e) {
        throw badRequest(`error decoding YAML: ${e instanceof Error ? e.message : String(e)}`);
      }
      if (!isRecord(parsed)) throw badRequest('invalid object: apply patch must be an object');
      const applied = this.normalize(r, parsed);
      if (applied.metadata.name && applied.metadata.name !== name) throw badRequest(`the name of the object (${applied.metadata.name}) does not match the name on the URL (${name})`);
      applied.metadata.name = name;
      const { object, created } = this.store.apply(r.resource, r.namespace, name, applied, { ...writeContext(r, subresource), force: r.query.get('force') === 'true' });
      sendJson(r.res, created ? 201 : 200, object);
      return;
    }
    const patchBody = parseJson(text);
    let apply: (cur: KubeObject) => unknown;
    if (contentType === 'application/merge-patch+json') apply = (cur) => mergePatch(cur, patchBody);
    else if (contentType === 'application/strategic-merge-patch+json') apply = (cur) => strategicMergePatch(cur, patchBody);
    else if (contentType === 'application/json-patch+json') apply = (cur) => jsonPatch(cur, patchBody);
    else throw unsupportedMediaType(contentType);
    const updated = this.store.update(r.resource, r.namespace, name, (cur) => {
      const next = apply(cur);
      if (!isRecord(next) || !isRecord(next.metadata)) throw badRequest('patch produced an invalid object');
      return next as KubeObject;
    }, writeContext(r, subresource));
    sendJson(r.res, 200, updated);
  }

  private async deleteOptions(r: ResourceRequest): Promise<DeleteOptions> {
    const text = await readBody(r.req);
    const body = text.trim() ? parseJson(text) : {};
    const b = isRecord(body) ? body : {};
    const policy = r.query.get('propagationPolicy') ?? (typeof b.propagationPolicy === 'string' ? b.propagationPolicy : undefined);
    const orphan = r.query.get('orphanDependents') ?? (typeof b.orphanDependents === 'boolean' ? String(b.orphanDependents) : undefined);
    const grace = r.query.get('gracePeriodSeconds') ?? (typeof b.gracePeriodSeconds === 'number' ? String(b.gracePeriodSeconds) : undefined);
    const pre = isRecord(b.preconditions) ? b.preconditions : {};
    if (policy !== undefined && policy !== 'Foreground' && policy !== 'Background' && policy !== 'Orphan') {
      throw badRequest(`DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: "${policy}": supported values: "Foreground", "Background", "Orphan"`);
    }
    return {
      ...(policy ? { propagationPolicy: policy } : orphan === 'true' ? { propagationPolicy: 'Orphan' as const } : {}),
      ...(grace !== undefined ? { gracePeriodSeconds: Number(grace) } : {}),
      preconditions: {
        ...(typeof pre.uid === 'string' ? { uid: pre.uid } : {}),
        ...(typeof pre.resourceVersion === 'string' ? { resourceVersion: pre.resourceVersion } : {}),
      },
    };
  }

  private async delete(r: ResourceRequest): Promise<void> {
    const opts = await this.deleteOptions(r);
    const result = this.store.delete(r.resource, r.namespace, r.name ?? '', opts, writeContext(r));
    if (result.kind === 'pending') return sendJson(r.res, 200, result.object);
    sendJson(r.res, 200, hasStatusSubresource(r.resource) ? result.object : result.status);
  }

  private async deleteCollection(r: ResourceRequest): Promise<void> {
    const opts = await this.deleteOptions(r);
    const labels = parseLabelSelector(r.query.get('labelSelector'));
    const fields = parseFieldSelector(r.query.get('fieldSelector'));
    const victims = this.store.peekList(r.resource, r.namespace).filter((o) => matchesLabels(labels, o.metadata.labels) && matchesFields(fields, o));
    const items: Record<string, unknown>[] = [];
    for (const v of victims) {
      const result = this.store.delete(r.resource, v.metadata.namespace, v.metadata.name ?? '', opts, writeContext(r));
      items.push(listItem(result.object));
    }
    sendJson(r.res, 200, { kind: `${r.resource.kind}List`, apiVersion: apiVersionOf(r.resource), metadata: { resourceVersion: String(this.store.currentRv()) }, items });
  }

  /** `pods/binding`: what the scheduler posts to assign a node. */
  private async bind(r: ResourceRequest): Promise<void> {
    if (r.resource.kind !== 'Pod') throw pathNotFound(r.req.url ?? '');
    const body = parseJson(await readBody(r.req));
    const target = isRecord(body) && isRecord(body.target) && typeof body.target.name === 'string' ? body.target.name : '';
    if (!target) throw badRequest('Binding.target.name: Required value');
    bindPod(this.store, r.resource, r.namespace, r.name ?? '', target, writeContext(r));
    sendJson(r.res, 201, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 });
  }

  private async scale(r: ResourceRequest, method: string): Promise<void> {
    const name = r.name ?? '';
    const toScale = (o: KubeObject): Record<string, unknown> => {
      const spec = isRecord(o.spec) ? o.spec : {};
      const status = isRecord(o.status) ? o.status : {};
      return {
        kind: 'Scale',
        apiVersion: 'autoscaling/v1',
        metadata: { name, namespace: o.metadata.namespace, uid: o.metadata.uid, resourceVersion: o.metadata.resourceVersion, creationTimestamp: o.metadata.creationTimestamp },
        spec: { replicas: spec.replicas ?? 0 },
        status: { replicas: status.replicas ?? 0, selector: labelSelectorString(spec.selector) },
      };
    };
    if (method === 'GET') {
      const o = this.store.peek(r.resource, r.namespace, name);
      if (!o) throw notFound(r.resource, name);
      return sendJson(r.res, 200, toScale(o));
    }
    if (method !== 'PUT' && method !== 'PATCH') throw methodNotAllowed();
    const body = parseJson(await readBody(r.req));
    const replicas = isRecord(body) && isRecord(body.spec) && typeof body.spec.replicas === 'number' ? body.spec.replicas : undefined;
    if (replicas === undefined) throw badRequest('Scale.spec.replicas: Required value');
    const rv = isRecord(body) && isRecord(body.metadata) && typeof body.metadata.resourceVersion === 'string' ? body.metadata.resourceVersion : undefined;
    const updated = this.store.update(r.resource, r.namespace, name, (cur) => {
      if (rv && rv !== cur.metadata.resourceVersion) throw conflict(r.resource, name);
      return { ...cur, spec: { ...(isRecord(cur.spec) ? cur.spec : {}), replicas } };
    }, writeContext(r));
    sendJson(r.res, 200, toScale(updated));
  }
}

function labelSelectorString(selector: unknown): string {
  if (!isRecord(selector) || !isRecord(selector.matchLabels)) return '';
  return Object.entries(selector.matchLabels).map(([k, v]) => `${k}=${String(v)}`).join(',');
}
