import {
  EXEC_BEARER_PROTOCOL_PREFIX,
  EXEC_STREAM_PROTOCOL,
  ExplainPlacementResponseSchema,
  GatewayDeleteSandboxResponseSchema,
  GatewayListDirResponseSchema,
  GatewayListSandboxesResponseSchema,
  GatewaySandboxSchema,
  LogLineSchema,
  type LogLine,
} from '@paddock/contracts';
import { ndjsonLines } from '../lib/ndjson';
import { request, send, type ApiTarget } from './http';

const sandboxPath = (id: string): string => `/v1/sandboxes/${encodeURIComponent(id)}`;

export interface SandboxFilters {
  state?: string;
  tags?: string[];
  runnerIds?: string[];
  showTerminated?: boolean;
}

export const gateway = {
  listSandboxes: (t: ApiTarget, f: SandboxFilters) =>
    request(t, 'GET', '/v1/sandboxes', {
      query: {
        pageSize: 100,
        state: f.state || undefined,
        tags: f.tags?.length ? f.tags.join(',') : undefined,
        runnerIds: f.runnerIds?.length ? f.runnerIds.join(',') : undefined,
        showTerminated: f.showTerminated ? true : undefined,
      },
      schema: GatewayListSandboxesResponseSchema,
    }),
  getSandbox: (t: ApiTarget, id: string) => request(t, 'GET', sandboxPath(id), { schema: GatewaySandboxSchema }),
  explain: (t: ApiTarget, spec: unknown) => request(t, 'POST', '/v1/sandboxes:explain', { json: { spec }, schema: ExplainPlacementResponseSchema }),
  create: (t: ApiTarget, spec: unknown) => request(t, 'POST', '/v1/sandboxes', { json: { spec }, schema: GatewaySandboxSchema }),
  stop: (t: ApiTarget, id: string) => request(t, 'DELETE', sandboxPath(id), { schema: GatewayDeleteSandboxResponseSchema }),
  listDir: (t: ApiTarget, id: string, path: string) => request(t, 'GET', `${sandboxPath(id)}:listDir`, { query: { path }, schema: GatewayListDirResponseSchema }),
  /** The file's bytes, exactly. */
  download: async (t: ApiTarget, id: string, path: string): Promise<Blob> => (await send(t, 'GET', `${sandboxPath(id)}/files`, { query: { path } })).blob(),
  upload: (t: ApiTarget, id: string, path: string, bytes: Blob) => request<{ bytesWritten?: number }>(t, 'PUT', `${sandboxPath(id)}/files`, { query: { path }, bytes }),

  /** Log lines as the gateway streams them (NDJSON); `follow` keeps the stream open for new output. */
  async *logs(t: ApiTarget, id: string, opts: { follow: boolean; signal: AbortSignal }): AsyncGenerator<LogLine> {
    const res = await send(t, 'GET', `${sandboxPath(id)}/logs`, { query: { follow: opts.follow }, signal: opts.signal });
    if (!res.body) return;
    for await (const line of ndjsonLines(res.body)) {
      const parsed = LogLineSchema.safeParse(JSON.parse(line));
      if (parsed.success) yield parsed.data;
    }
  },

  /** Opens the exec WebSocket; the token rides in the subprotocol list (browsers cannot set headers). */
  openExec(t: ApiTarget, id: string): WebSocket {
    const base = new URL(t.baseUrl || window.location.origin);
    base.protocol = base.protocol === 'https:' ? 'wss:' : 'ws:';
    const ws = new WebSocket(`${base.origin}${sandboxPath(id)}/exec/stream`, [EXEC_STREAM_PROTOCOL, `${EXEC_BEARER_PROTOCOL_PREFIX}${t.token}`]);
    ws.binaryType = 'arraybuffer';
    return ws;
  },
};
