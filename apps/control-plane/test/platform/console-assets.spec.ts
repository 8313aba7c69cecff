import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveAssetPath } from '../../src/infrastructure/http/console-assets';
import { startTestApp, type TestApp } from '../support/app';

const dir = mkdtempSync(join(tmpdir(), 'paddock-console-'));
mkdirSync(join(dir, 'assets'));
writeFileSync(join(dir, 'index.html'), '<!doctype html><title>console</title>');
writeFileSync(join(dir, 'assets', 'index-abc123.js'), 'console.log(1)');

let t: TestApp;
let unbuilt: TestApp;
beforeAll(async () => {
  t = await startTestApp({ env: { PADDOCK_CONSOLE_DIR: dir, PADDOCK_CONSOLE_GATEWAY_URL: 'http://127.0.0.1:9999' } });
  unbuilt = await startTestApp({ env: { PADDOCK_CONSOLE_DIR: join(dir, 'missing') } });
});
afterAll(async () => {
  await t?.close();
  await unbuilt?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('the web console, served at /console/', () => {
  it('serves index.html for the console and its in-page routes, with a policy that keeps the page to itself and the gateway', async () => {
    const redirect = await fetch(`${t.baseUrl}/console`, { redirect: 'manual' });
    expect(redirect.status).toBe(308);
    expect(redirect.headers.get('location')).toBe('/console/');
    for (const path of ['/console/', '/console/runners/local/policy', '/console/sandboxes']) {
      const r = await fetch(`${t.baseUrl}${path}`);
      expect(r.status).toBe(200);
      expect(r.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(await r.text()).toContain('<title>console</title>');
      const csp = r.headers.get('content-security-policy') ?? '';
      expect(csp).toContain("script-src 'self'");
      expect(csp).toContain("connect-src 'self' http://127.0.0.1:9999 ws://127.0.0.1:9999");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(r.headers.get('x-frame-options')).toBe('DENY');
    }
  });

  it('serves hashed assets as immutable and tells the page where the gateway is', async () => {
    const js = await fetch(`${t.baseUrl}/console/assets/index-abc123.js`);
    expect(js.status).toBe(200);
    expect(js.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(js.headers.get('cache-control')).toContain('immutable');
    expect(await js.text()).toBe('console.log(1)');
    const config = await fetch(`${t.baseUrl}/console/config.json`);
    expect(await config.json()).toEqual({ gatewayUrl: 'http://127.0.0.1:9999' });
  });

  it('answers 404 for a missing asset and for paths that leave the console directory', async () => {
    expect((await fetch(`${t.baseUrl}/console/assets/nope.js`)).status).toBe(404);
    expect((await fetch(`${t.baseUrl}/console/%2e%2e/%2e%2e/package.json`)).status).toBe(404);
    expect(resolveAssetPath(dir, '../secret')).toBeNull();
    expect(resolveAssetPath(dir, '%2e%2e/secret')).toBeNull();
    expect(resolveAssetPath(dir, 'a\0b')).toBeNull();
    expect(resolveAssetPath(dir, 'assets/x.js')).toBe(join(dir, 'assets', 'x.js'));
  });

  it('says how to build the console when it is not built, and the API still needs its token', async () => {
    const r = await fetch(`${unbuilt.baseUrl}/console/`);
    expect(r.status).toBe(404);
    expect(await r.text()).toContain('pnpm --filter @paddock/console build');
    expect((await fetch(`${t.baseUrl}/v1/sandbox/managedRunners`)).status).toBe(401);
  });
});
