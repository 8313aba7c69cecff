import type { AddressInfo } from 'node:net';
import { startNats, waitFor, type ThrowawayNats } from '@paddock/testing';
import { AppConfig, parseEnv } from '../../src/config';
import { createControlPlane } from '../../src/control-plane';
import { api, newTestDatabase } from '../support/app';
import type { ErrorBody } from '../support/errors';

describe('environment parsing', () => {
  it('applies the documented defaults', () => {
    const r = parseEnv({});
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.env).toMatchObject({
      CONTROL_PLANE_PORT: 8080,
      HOST: '127.0.0.1',
      DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/paddock',
      NATS_URL: 'nats://127.0.0.1:4222',
      LOG_LEVEL: 'info',
      PADDOCK_TOKEN_CACHE_TTL_MS: 5000,
      PADDOCK_HEARTBEAT_STALE_MS: 15000,
    });
    expect(new AppConfig(r.env).pageTokenSecretGenerated).toBe(true);
  });

  it('lists every bad variable by name in one readable message', () => {
    const r = parseEnv({ CONTROL_PLANE_PORT: 'eighty', DATABASE_URL: 'not a url', PADDOCK_BOOTSTRAP_TOKEN: 'secret', PADDOCK_HEARTBEAT_STALE_MS: '60000', LOG_LEVEL: '' });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.message.split('\n')[0]).toBe('invalid control-plane configuration:');
    for (const name of ['CONTROL_PLANE_PORT', 'DATABASE_URL', 'PADDOCK_BOOTSTRAP_TOKEN', 'PADDOCK_HEARTBEAT_STALE_MS']) {
      expect(r.message).toContain(`  - ${name}: `);
    }
    // An empty value counts as unset.
    expect(r.message).not.toContain('LOG_LEVEL');
  });
});

describe('first start without PADDOCK_BOOTSTRAP_TOKEN', () => {
  let nats: ThrowawayNats;
  let database: { url: string; release(): Promise<void> };
  beforeAll(async () => {
    [nats, database] = await Promise.all([startNats(), newTestDatabase()]);
  });
  afterAll(async () => {
    await nats?.stop();
    await database?.release();
  });

  it('creates the database, generates an admin token once, and a restart keeps it valid without printing another', async () => {
    // A database that does not exist yet: the start creates it and migrates it from scratch.
    const url = new URL(database.url);
    url.pathname = `/fresh_${process.pid}`;
    const parsed = parseEnv({ DATABASE_URL: url.toString(), ...(await nats.env('control-plane')), LOG_LEVEL: 'silent', CONTROL_PLANE_PORT: '0' });
    if (!parsed.ok) throw new Error(parsed.message);
    const config = new AppConfig(parsed.env);

    const first = await createControlPlane({ config });
    expect(first.generatedAdminToken).toMatch(/^pdk_[A-Za-z0-9_-]{43}$/);
    expect(first.migrationsApplied).toContain('20261129090000_identity');
    await first.app.close();

    const second = await createControlPlane({ config });
    expect(second.generatedAdminToken).toBeUndefined();
    expect(second.migrationsApplied).toEqual([]);
    expect(second.operatorOrganizationId).toBe(first.operatorOrganizationId);
    await second.app.listen(0, '127.0.0.1');
    try {
      const baseUrl = `http://127.0.0.1:${(second.app.getHttpServer().address() as AddressInfo).port}`;
      const who = await api({ baseUrl }, 'GET', '/v1/auth/whoami', { token: first.generatedAdminToken });
      expect(who.status).toBe(200);
      expect(who.body).toMatchObject({ organization: { id: first.operatorOrganizationId }, role: 'SANDBOX_ADMIN', operator: true });

      // Readiness follows NATS: unavailable (naming it) while the server is down, ready again after.
      await nats.kill();
      const down = await waitFor(async () => {
        const r = await api<ErrorBody>({ baseUrl }, 'GET', '/readyz');
        return r.status === 503 ? r : undefined;
      }, { what: 'readyz 503', timeoutMs: 15_000 });
      expect(down.body.code).toBe('unavailable');
      expect(down.body.message).toMatch(/^not ready: nats: /);
      expect((await api({ baseUrl }, 'GET', '/healthz')).status).toBe(200);
      await nats.restart();
      await waitFor(async () => (await api({ baseUrl }, 'GET', '/readyz')).status === 200, { what: 'readyz 200 again', timeoutMs: 20_000 });
    } finally {
      await second.app.close();
    }
  });
});
