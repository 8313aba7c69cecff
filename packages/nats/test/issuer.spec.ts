import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NATS_ROLES } from '@paddock/contracts';
import { credsInfo, generateInstallationKeys, NatsUserIssuer, openInstallationDir, publicKeyOf } from '../src';

describe('NatsUserIssuer', () => {
  const keys = generateInstallationKeys();
  const issuer = new NatsUserIssuer(publicKeyOf(keys.account), { runner: keys.signing.runner });

  it('issues a user of its role, tagged with the role, in the account, expiring after the TTL', async () => {
    const now = new Date('2026-12-01T10:00:00Z');
    const issued = await issuer.issue('runner', 'r1', { ttlSeconds: 3600, now: () => now });
    const info = credsInfo(issued.creds);
    expect(info).toMatchObject({ name: 'r1', role: 'runner', account: publicKeyOf(keys.account), publicKey: issued.publicKey });
    expect(info.expiresAt?.toISOString()).toBe('2026-12-01T11:00:00.000Z');
    expect(issued.creds).toContain('-----BEGIN USER NKEY SEED-----');
  });

  it('refuses a role it holds no key for, and a name that would widen a subject', async () => {
    await expect(issuer.issue('gateway', 'gw')).rejects.toThrow('this issuer holds no signing key for the NATS role "gateway"');
    await expect(issuer.issue('runner', 'a.*')).rejects.toThrow('NATS user name "a.*" is invalid');
  });
});

describe('openInstallationDir', () => {
  it('keeps its keys across openings and keeps every secret file private (0600, directories 0700)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'paddock-nats-dir-'));
    try {
      const first = await openInstallationDir(dir, { server: { host: '127.0.0.1', port: 4333 } });
      const again = await openInstallationDir(dir);
      expect(again.accountPublicKey).toBe(first.accountPublicKey);
      const creds = await again.writeCreds('gateway', 'gateway');
      expect(credsInfo(readFileSync(creds, 'utf8')).role).toBe('gateway');
      const files = [...readdirSync(dir), ...NATS_ROLES.map((r) => join('signing', `${r}.nk`)), join('creds', 'gateway-gateway.creds')];
      for (const f of files) {
        const mode = statSync(join(dir, f)).mode & 0o777;
        expect([f, mode.toString(8)]).toEqual([f, statSync(join(dir, f)).isDirectory() ? '700' : '600']);
      }
      expect(readFileSync(first.serverConfigFile, 'utf8')).toMatch(/resolver: MEMORY/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
