import { EXEC_BEARER_PROTOCOL_PREFIX, EXEC_STREAM_PROTOCOL } from '@paddock/contracts';
import { PaddockClient, Sandbox } from '@paddock/sdk';
import WebSocket from 'ws';
import { authorizationFromProtocols, selectExecProtocol } from '../src/http/websocket-bearer';
import { specWith, useCluster } from './support/cluster';

const CONSOLE = 'http://console.test:8080';

/** What the web console needs from the gateway: CORS for its origin only, and a WebSocket token a browser can send. */
describe('gateway: access from the web console', () => {
  const cluster = useCluster({ runnerIds: ['r-medium'], gatewayEnv: { GATEWAY_CONSOLE_ORIGINS: CONSOLE } });

  it('answers preflights and requests from the console origin with CORS headers, and gives any other origin none', async () => {
    const c = cluster();
    const preflight = await fetch(`${c.gw.url}/v1/sandboxes`, {
      method: 'OPTIONS',
      headers: { origin: CONSOLE, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe(CONSOLE);
    expect(preflight.headers.get('access-control-allow-headers')).toContain('authorization');
    expect(preflight.headers.get('access-control-allow-methods')).toContain('PUT');
    expect(preflight.headers.get('access-control-allow-credentials')).toBeNull();

    const list = await fetch(`${c.gw.url}/v1/sandboxes`, { headers: { origin: CONSOLE, authorization: `Bearer ${c.token}` } });
    expect(list.status).toBe(200);
    expect(list.headers.get('access-control-allow-origin')).toBe(CONSOLE);
    expect(list.headers.get('vary')).toContain('origin');

    const foreign = await fetch(`${c.gw.url}/v1/sandboxes`, {
      method: 'OPTIONS',
      headers: { origin: 'http://evil.test', 'access-control-request-method': 'POST' },
    });
    expect(foreign.headers.get('access-control-allow-origin')).toBeNull();
    const foreignGet = await fetch(`${c.gw.url}/v1/sandboxes`, { headers: { origin: 'http://evil.test', authorization: `Bearer ${c.token}` } });
    expect(foreignGet.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('authenticates the exec WebSocket with a bearer subprotocol entry, answers with the exec protocol only, and refuses a bad token before upgrading', async () => {
    const c = cluster();
    const sb = await Sandbox.run(specWith('250m'), { client: new PaddockClient({ baseUrl: c.gw.url, apiKey: c.token }) });
    const url = `${c.gw.url.replace('http', 'ws')}/v1/sandboxes/${sb.sandboxId}/exec/stream`;
    const ws = new WebSocket(url, [EXEC_STREAM_PROTOCOL, `${EXEC_BEARER_PROTOCOL_PREFIX}${c.token}`]);
    await new Promise((r) => ws.once('open', r));
    expect(ws.protocol).toBe(EXEC_STREAM_PROTOCOL);
    const out: Buffer[] = [];
    ws.on('message', (d: Buffer, bin: boolean) => {
      if (bin) out.push(d.subarray(1));
    });
    ws.send(JSON.stringify({ type: 'init', argv: ['sh', '-c', 'echo browser-ok'] }));
    await new Promise((r) => ws.once('close', r));
    expect(Buffer.concat(out).toString()).toBe('browser-ok\n');

    const bad = new WebSocket(url, [EXEC_STREAM_PROTOCOL, `${EXEC_BEARER_PROTOCOL_PREFIX}pdk_not-a-real-token-at-all`]);
    const status = await new Promise<number>((r) => bad.once('unexpected-response', (_q, res) => r(res.statusCode ?? 0)));
    expect(status).toBe(401);
    await sb.stop();
  });

  it('reads the token from the protocol list and never selects the bearer entry', () => {
    expect(authorizationFromProtocols(`${EXEC_STREAM_PROTOCOL}, ${EXEC_BEARER_PROTOCOL_PREFIX}pdk_abc`)).toBe('Bearer pdk_abc');
    expect(authorizationFromProtocols(EXEC_STREAM_PROTOCOL)).toBeUndefined();
    expect(authorizationFromProtocols(undefined)).toBeUndefined();
    expect(selectExecProtocol(new Set([`${EXEC_BEARER_PROTOCOL_PREFIX}pdk_abc`, EXEC_STREAM_PROTOCOL]))).toBe(EXEC_STREAM_PROTOCOL);
    expect(selectExecProtocol(new Set([`${EXEC_BEARER_PROTOCOL_PREFIX}pdk_abc`]))).toBe(false);
  });
});
