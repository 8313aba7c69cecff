import { sh, startPlatform, type Platform } from './support/platform';

/** `cwic auth token create|ls|revoke` against a real control plane: tokens without curl. */
describe('cwic auth token', () => {
  let p: Platform;

  beforeAll(async () => {
    p = await startPlatform();
    p.shellEnv.PADDOCK_API_KEY = p.token;
    p.shellEnv.PADDOCK_CONTROL_PLANE_URL = p.cpUrl;
  }, 120_000);

  afterAll(async () => {
    await p?.stop();
  });

  const as = (token: string, cmd: string): ReturnType<typeof sh> => sh(p, `PADDOCK_API_KEY='${token}' ${cmd}`);

  it('create prints the secret once, alone on stdout; the token works with its role', () => {
    const created = sh(p, 'cwic auth token create ci-bot --role SANDBOX_USER');
    expect(created.code, created.stderr).toBe(0);
    const secret = created.stdout.trim();
    expect(secret).toMatch(/^pdk_\S+$/);
    expect(created.stdout).toBe(`${secret}\n`);

    const who = JSON.parse(as(secret, 'cwic auth whoami -o json').stdout) as { role: string; token: { name: string } };
    expect(who).toMatchObject({ role: 'SANDBOX_USER', token: { name: 'ci-bot' } });

    const listed = sh(p, 'cwic auth token ls');
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(/ID\s+NAME\s+ROLE\s+PREFIX\s+AGE\s+LAST USED/);
    expect(listed.stdout).toMatch(/ci-bot\s+SANDBOX_USER/);
    // Listing never shows a secret.
    expect(listed.stdout).not.toContain(secret);
    expect(sh(p, 'cwic auth token ls -o json').stdout).not.toContain(secret);
  });

  it('a SANDBOX_USER token cannot mint tokens; a bad role is a usage error naming the choices', () => {
    const user = sh(p, 'cwic auth token create limited --role SANDBOX_USER').stdout.trim();
    const refused = as(user, 'cwic auth token create escalate --role SANDBOX_ADMIN');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^Error: creating token escalate: permission_denied: /);
    const bad = sh(p, 'cwic auth token create x --role ROOT');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--role must be one of SANDBOX_ADMIN, SANDBOX_USER');
  });

  it('revoke stops the token from working; ls hides revoked tokens unless --all', async () => {
    const created = JSON.parse(sh(p, 'cwic auth token create short-lived -o json').stdout) as { id: string; token: string };
    expect(as(created.token, 'cwic auth whoami').code).toBe(0);
    const revoked = sh(p, `cwic auth token revoke ${created.id}`);
    expect(revoked.code, revoked.stderr).toBe(0);
    expect(revoked.stdout).toBe(`token/${created.id} (short-lived) revoked\n`);
    const after = as(created.token, 'cwic auth whoami');
    expect(after.code).toBe(1);
    expect(after.stderr).toMatch(/unauthenticated/);
    expect(sh(p, 'cwic auth token ls -o name').stdout).not.toContain(created.id);
    expect(sh(p, 'cwic auth token ls --all -o name').stdout).toContain(`token/${created.id}`);
    expect(sh(p, 'cwic auth token revoke 00000000-0000-0000-0000-000000000000').code).toBe(3);
  });
});
