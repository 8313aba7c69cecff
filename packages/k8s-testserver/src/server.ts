import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import type { KubeConfig } from '@kubernetes/client-node';
import { applyDefaults, foldStringData } from './admission/defaults';
import { podSecurityAdmission, podUpdateValidation, resourceQuotaAdmission, runtimeClassAdmission, serviceAccountAdmission } from './admission/pod-admission';
import { schemaAdmission } from './admission/schema-admission';
import { DeploymentController } from './controllers/deployment';
import { GarbageCollector } from './controllers/garbage-collector';
import { QuotaController } from './controllers/quota';
import { Scheduler } from './controllers/scheduler';
import { discovery } from './http/discovery';
import { ExecServer } from './http/exec';
import { serveLogs } from './http/logs';
import { sendError, sendJson, sendStatus } from './http/respond';
import { RestHandler } from './http/rest';
import { route } from './http/router';
import { WatchHub } from './http/watch';
import { Kubelet, type KubeletOptions } from './kubelet/kubelet';
import { nodeObject, withTaint } from './nodes';
import { ApiError, pathNotFound, unauthorized, type StatusBody } from './store/errors';
import { mustFindByKind } from './store/resources';
import { ObjectStore } from './store/store';
import { clone, type KubeObject, type NodeSpecLite, type Taint } from './types';

export interface K8sTestServerOptions {
  /** Watch events kept for resumption; a resume from an older resourceVersion gets 410 Gone (default 10,000). */
  watchHistory?: number;
  /** Kubelet stand-in options; `{ enabled: false }` leaves bound pods Pending. */
  kubelet?: KubeletOptions;
  /** Run the scheduler (default true). */
  scheduler?: boolean;
  /** Run the Deployment and ReplicaSet controllers (default true). */
  deploymentController?: boolean;
  /** Nodes to register at start (default one untainted node, `node-1`). */
  nodes?: NodeSpecLite[];
  /** Bearer token clients must present (default a fixed test token). */
  token?: string;
  /**
   * More identities, by name, each with its own token: requests with one are accepted and say whose
   * they are (`RequestInfo.user`), so a hook can authorize them as RBAC would.
   */
  users?: Record<string, string>;
  /**
   * Accept requests that carry no credentials (a wrong token is still a 401). kubectl/client-go
   * never send a bearer token over plain HTTP, so point kubectl at this server with this on.
   */
  anonymous?: boolean;
  /** Interval between BOOKMARK events on watches that allow them (default 1000 ms; the real server uses ~1 min). */
  bookmarkIntervalMs?: number;
  /** Reject writes that fail the kind's OpenAPI schema with 422 (default true). */
  schemaValidation?: boolean;
}

/** What a request hook sees. `verb` is the RBAC verb (get, list, watch, create, update, patch, delete, deletecollection). */
export interface RequestInfo {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  verb: string;
  /** Whose token the request carried: a name of `users`, or `test` for the server's own token. */
  user?: string;
  group?: string;
  resource?: string;
  namespace?: string;
  name?: string;
  subresource?: string;
}

/**
 * A hook's answer: nothing to let the request through, a response to send instead (a `Status`
 * built from code/reason/message unless `body` is given), or `drop` to reset the connection.
 */
export type RequestHookResult = void | { code: number; reason?: string; message?: string; body?: unknown } | { drop: true };
export type RequestHook = (req: RequestInfo) => RequestHookResult | Promise<RequestHookResult>;

export interface K8sTestServer {
  url: string;
  token: string;
  /** A client-node KubeConfig for this server (plain HTTP, bearer token), as `user` (one of `users`) when given. */
  kubeConfig(namespace?: string, user?: string): KubeConfig;
  list(apiVersion: string, kind: string, namespace?: string): KubeObject[];
  get(apiVersion: string, kind: string, name: string, namespace?: string): KubeObject | undefined;
  /** Test-side create, bypassing HTTP (still admitted and defaulted). */
  create(obj: KubeObject, fieldManager?: string): KubeObject;
  addNode(node: NodeSpecLite): void;
  taintNode(name: string, taint: Taint): void;
  untaintNode(name: string, key: string): void;
  /** Drops the watch history and ends open watches with a 410 ERROR event: informers must relist. */
  expireWatchHistory(): void;
  /** Writes accepted, by field manager (all managers when omitted). */
  writeCount(fieldManager?: string): number;
  /** Requests answered (all verbs), for checking relist and retry rates. */
  requestCount(verb?: string, resource?: string): number;
  /** Open watch streams. */
  openWatches(): number;
  /** Ends every open watch, as an API server restart or a load balancer cutting idle streams does. */
  dropWatches(): void;
  onRequest(hook: RequestHook): () => void;
  currentResourceVersion(): number;
  close(): Promise<void>;
}

const DEFAULT_TOKEN = 'k8s-testserver-token';

function verbOf(method: string, hasName: boolean, watch: boolean): string {
  switch (method) {
    case 'GET':
      return hasName ? 'get' : watch ? 'watch' : 'list';
    case 'POST':
      return 'create';
    case 'PUT':
      return 'update';
    case 'PATCH':
      return 'patch';
    case 'DELETE':
      return hasName ? 'delete' : 'deletecollection';
    default:
      return method.toLowerCase();
  }
}

export async function startK8sTestServer(opts: K8sTestServerOptions = {}): Promise<K8sTestServer> {
  // Loaded here, not at import, so `validateManifest`/`checkPodSecurityRestricted` users skip client-node's load time.
  const { KubeConfig: KubeConfigClass } = await import('@kubernetes/client-node');
  const token = opts.token ?? DEFAULT_TOKEN;
  const store = new ObjectStore(opts.watchHistory ?? 10_000);
  store.admission.push(applyDefaults, foldStringData);
  if (opts.schemaValidation !== false) store.admission.push(schemaAdmission);
  store.admission.push(
    podUpdateValidation,
    serviceAccountAdmission(store),
    runtimeClassAdmission(store),
    podSecurityAdmission(store),
    resourceQuotaAdmission(store),
  );
  const watches = new WatchHub(store, opts.bookmarkIntervalMs ?? 1000);
  const rest = new RestHandler(store, watches);
  const gc = new GarbageCollector(store);
  const quota = new QuotaController(store);
  const scheduler = opts.scheduler === false ? undefined : new Scheduler(store);
  const deployments = opts.deploymentController === false ? undefined : new DeploymentController(store);
  const kubelet = opts.kubelet?.enabled === false ? undefined : new Kubelet(store, opts.kubelet);
  const exec = kubelet ? new ExecServer(kubelet) : undefined;
  const hooks: RequestHook[] = [];
  const requests = new Map<string, number>();

  const system = { manager: 'k8s-testserver' };
  const nsType = mustFindByKind('v1', 'Namespace');
  const nodeType = mustFindByKind('v1', 'Node');
  for (const ns of ['default', 'kube-system', 'kube-public', 'kube-node-lease']) {
    store.create(nsType, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }, system);
  }
  for (const n of opts.nodes ?? [{ name: 'node-1' }]) store.create(nodeType, nodeObject(n), { manager: 'kubelet' });

  const tokens = new Map<string, string>([[`Bearer ${token}`, 'test'], ...Object.entries(opts.users ?? {}).map(([name, t]) => [`Bearer ${t}`, name] as const)]);
  const userOf = (headers: IncomingHttpHeaders): string | undefined => (headers.authorization === undefined ? undefined : tokens.get(headers.authorization));
  const authorized = (headers: IncomingHttpHeaders): boolean =>
    userOf(headers) !== undefined || (opts.anonymous === true && headers.authorization === undefined);

  const describe = (req: IncomingMessage, url: URL): RequestInfo => {
    const r = route(url.pathname);
    const watch = url.searchParams.get('watch') === 'true' || (r.kind === 'resource' && r.watchPath);
    const user = userOf(req.headers);
    const base = { method: req.method ?? 'GET', path: url.pathname, query: url.searchParams, headers: req.headers, ...(user ? { user } : {}) };
    if (r.kind !== 'resource') return { ...base, verb: verbOf(base.method, true, false) };
    return {
      ...base,
      verb: verbOf(base.method, r.name !== undefined, watch),
      group: r.resource.group,
      resource: r.resource.plural,
      ...(r.namespace ? { namespace: r.namespace } : {}),
      ...(r.name ? { name: r.name } : {}),
      ...(r.subresource ? { subresource: r.subresource } : {}),
    };
  };

  const runHooks = async (info: RequestInfo): Promise<StatusBody | { code: number; body: unknown } | 'drop' | undefined> => {
    const key = `${info.verb} ${info.resource ?? info.path}`;
    requests.set(key, (requests.get(key) ?? 0) + 1);
    for (const hook of hooks) {
      const out = await hook(info);
      if (!out) continue;
      if ('drop' in out) return 'drop';
      if (out.body !== undefined) return { code: out.code, body: out.body };
      return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: out.message ?? 'injected fault', reason: out.reason ?? 'InternalError', code: out.code };
    }
    return undefined;
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (!authorized(req.headers)) throw unauthorized();
    const info = describe(req, url);
    const injected = await runHooks(info);
    if (injected === 'drop') return void req.socket.destroy();
    if (injected) {
      if ('kind' in injected) return sendStatus(res, injected);
      return sendJson(res, injected.code, injected.body);
    }
    const r = route(url.pathname);
    if (r.kind === 'discovery') {
      if (/^\/(healthz|readyz|livez)$/.test(r.path)) {
        res.writeHead(200, { 'Content-Type': 'text/plain' });
        return void res.end('ok');
      }
      const body = discovery(r.path, `127.0.0.1:${(server.address() as AddressInfo).port}`);
      if (body === undefined) throw pathNotFound(url.pathname);
      return sendJson(res, 200, body);
    }
    if (r.kind === 'unknown') throw pathNotFound(url.pathname);
    if (r.resource.kind === 'Pod' && r.subresource === 'log' && r.name) {
      if (!kubelet) throw pathNotFound(url.pathname);
      return serveLogs(req, res, kubelet, r.namespace ?? '', r.name, url.searchParams);
    }
    if (r.resource.kind === 'Pod' && r.subresource === 'exec') {
      throw new ApiError({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'Upgrade request required', reason: 'BadRequest', code: 400 });
    }
    await rest.handle({ req, res, query: url.searchParams, resource: r.resource, ...(r.namespace ? { namespace: r.namespace } : {}), ...(r.name ? { name: r.name } : {}), ...(r.subresource ? { subresource: r.subresource } : {}), watchPath: r.watchPath });
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => sendError(res, err));
  });

  const rejectUpgrade = (socket: Duplex, err: unknown): void => {
    const status = err instanceof ApiError ? err.status : { code: 500, message: String(err) };
    const body = JSON.stringify(status);
    socket.end(`HTTP/1.1 ${status.code} ${status.code === 404 ? 'Not Found' : status.code === 401 ? 'Unauthorized' : 'Bad Request'}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
  };

  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const go = async (): Promise<void> => {
      if (!authorized(req.headers)) throw unauthorized();
      const r = route(url.pathname);
      if (r.kind !== 'resource' || r.resource.kind !== 'Pod' || r.subresource !== 'exec' || !r.name || !exec) throw pathNotFound(url.pathname);
      const injected = await runHooks({ ...describe(req, url), verb: 'create' });
      if (injected === 'drop') return void socket.destroy();
      if (injected) throw new ApiError('kind' in injected ? injected : { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', code: injected.code });
      exec.upgrade(req, socket, head, r.namespace ?? '', r.name, url.searchParams);
    };
    go().catch((err: unknown) => rejectUpgrade(socket, err));
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const resourceOf = (apiVersion: string, kind: string): ReturnType<typeof mustFindByKind> => mustFindByKind(apiVersion, kind);

  return {
    url,
    token,
    kubeConfig(namespace?: string, user?: string): KubeConfig {
      const kc = new KubeConfigClass();
      const userToken = user === undefined ? token : opts.users?.[user];
      if (userToken === undefined) throw new Error(`the test server has no user ${user}`);
      kc.loadFromOptions({
        clusters: [{ name: 'k8s-testserver', server: url, skipTLSVerify: true }],
        users: [{ name: user ?? 'test', token: userToken }],
        contexts: [{ name: 'k8s-testserver', cluster: 'k8s-testserver', user: user ?? 'test', ...(namespace ? { namespace } : {}) }],
        currentContext: 'k8s-testserver',
      });
      return kc;
    },
    list: (apiVersion, kind, namespace) => store.peekList(resourceOf(apiVersion, kind), namespace).map((o) => clone(o)),
    get: (apiVersion, kind, name, namespace) => store.get(resourceOf(apiVersion, kind), namespace, name),
    create: (obj, fieldManager = 'k8s-testserver') => store.create(resourceOf(obj.apiVersion, obj.kind), obj, { manager: fieldManager }),
    addNode: (node) => void store.create(nodeType, nodeObject(node), { manager: 'kubelet' }),
    taintNode: (name, taint) => void store.update(nodeType, undefined, name, (cur) => withTaint(cur, taint), system),
    untaintNode: (name, key) =>
      void store.update(nodeType, undefined, name, (cur) => {
        const spec = (cur.spec ?? {}) as { taints?: Taint[] };
        return { ...cur, spec: { ...spec, taints: (spec.taints ?? []).filter((t) => t.key !== key) } };
      }, system),
    expireWatchHistory: () => {
      store.expireHistory();
      watches.expireAll();
    },
    writeCount: (fieldManager) => store.writeCount(fieldManager),
    requestCount: (verb, resource) => {
      let n = 0;
      for (const [k, v] of requests) {
        const [kv, kr] = k.split(' ');
        if ((verb === undefined || kv === verb) && (resource === undefined || kr === resource)) n += v;
      }
      return n;
    },
    openWatches: () => watches.openCount,
    onRequest: (hook) => {
      hooks.push(hook);
      return () => {
        const i = hooks.indexOf(hook);
        if (i >= 0) hooks.splice(i, 1);
      };
    },
    currentResourceVersion: () => store.currentRv(),
    dropWatches: () => watches.closeAll(),
    close: async () => {
      watches.closeAll();
      exec?.close();
      scheduler?.close();
      deployments?.close();
      quota.close();
      gc.close();
      await kubelet?.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
