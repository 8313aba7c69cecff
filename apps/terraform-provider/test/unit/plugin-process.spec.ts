import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeServerCertificate } from '../../src/plugin/certificate';
import { MAGIC_COOKIE_KEY, MAGIC_COOKIE_VALUE } from '../../src/plugin/handshake';
import { APP_ROOT } from '../support/terraform';

/** The bundled binary as Terraform starts it: the handshake on stdout, and its socket removed when stopped. */
const BUNDLE = join(APP_ROOT, 'dist', 'bundle', 'terraform-provider-coreweave.cjs');

describe('the provider process', () => {
  it('refuses to run when started by hand (no magic cookie)', () => {
    const r = spawnSync(process.execPath, [BUNDLE], { encoding: 'utf8', env: { PATH: process.env.PATH } });
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('It is not meant to be run directly');
  });

  it('prints one handshake line, serves on a unix socket, and removes the socket on SIGTERM right after', async () => {
    const socketDir = mkdtempSync(join(tmpdir(), 'paddock-plugin-test-'));
    const clientCert = makeServerCertificate().certPem;
    const child = spawn(process.execPath, [BUNDLE], {
      env: { PATH: process.env.PATH, [MAGIC_COOKIE_KEY]: MAGIC_COOKIE_VALUE, PLUGIN_PROTOCOL_VERSIONS: '5,6', PLUGIN_CLIENT_CERT: clientCert, PLUGIN_UNIX_SOCKET_DIR: socketDir },
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    try {
      const line = await new Promise<string>((resolve) => child.stdout.once('data', (d: Buffer) => resolve(d.toString())));
      const [core, proto, network, address, kind, cert] = line.trim().split('|');
      expect([core, proto, network, kind]).toEqual(['1', '6', 'unix', 'grpc']);
      expect(address?.startsWith(socketDir)).toBe(true);
      expect(cert).toMatch(/^[A-Za-z0-9+/]+$/);
      child.kill('SIGTERM');
      const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
      expect(code).toBe(0);
      expect(existsSync(address ?? '')).toBe(false);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      rmSync(socketDir, { recursive: true, force: true });
    }
  });
});
