import { sh, startPlatform, type Platform } from './support/platform';

/** `cwic secret-store` against a real control plane: values go in on stdin and never come back out. */
describe('cwic secret-store', () => {
  let p: Platform;

  beforeAll(async () => {
    p = await startPlatform();
    p.shellEnv.PADDOCK_API_KEY = p.token;
    p.shellEnv.PADDOCK_CONTROL_PLANE_URL = p.cpUrl;
  }, 120_000);

  afterAll(async () => {
    await p?.stop();
  });

  it('creates a store, writes a secret from stdin, lists paths only, removes and deletes', () => {
    const value = 'cli-secret-value-9f3a';
    const created = sh(p, 'cwic secret-store create app');
    expect(created.code, created.stderr).toBe(0);
    expect(created.stdout).toBe('secretstore/app created\n');
    const set = sh(p, `printf '%s\\n' '${value}' | cwic secret-store set app DB_PASSWORD`);
    expect(set.code, set.stderr).toBe(0);
    expect(set.stdout).toBe('secret/app/DB_PASSWORD written\n');
    const listed = sh(p, 'cwic secret-store ls');
    expect(listed.stdout).toMatch(/NAME\s+SECRETS\s+AGE/);
    expect(listed.stdout).toMatch(/app\s+1/);
    const one = sh(p, 'cwic secret-store get app -o json');
    expect((JSON.parse(one.stdout) as { secrets: { path: string }[] }).secrets.map((s) => s.path)).toEqual(['DB_PASSWORD']);
    for (const out of [listed.stdout, one.stdout, sh(p, 'cwic secret-store get app').stdout, sh(p, 'cwic secret-store ls -o yaml').stdout]) expect(out).not.toContain(value);
    expect(sh(p, 'cwic secret-store get app -o name').stdout).toBe('secret/app/DB_PASSWORD\n');
    expect(sh(p, 'cwic secret-store unset app DB_PASSWORD').stdout).toBe('secret/app/DB_PASSWORD removed\n');
    expect(sh(p, 'cwic secret-store get app -o name').stdout).toBe('\n');
    expect(sh(p, 'cwic secret-store delete app').stdout).toBe('secretstore/app deleted\n');
    const again = sh(p, 'cwic secret-store delete app');
    expect(again.code).toBe(3);
    expect(again.stderr).toMatch(/deleting secret store app: not_found/);
    expect(sh(p, 'cwic secret-store delete app --allow-missing').code).toBe(0);
  });

  it('an empty value is a usage error; a bad store name names the field', () => {
    sh(p, 'cwic secret-store create empty-check');
    const empty = sh(p, "printf '' | cwic secret-store set empty-check X");
    expect(empty.code).toBe(2);
    expect(empty.stderr).toContain('the secret value is empty');
    const bad = sh(p, 'cwic secret-store create Bad_Name');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('secretStore.name');
  });
});
