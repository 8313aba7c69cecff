import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startPlatform, type Platform } from '@paddock/e2e/platform';
import { buildPackages, httpJson, waitFor } from '@paddock/testing';
import type { ExplainPlacementResponse, ManagedRunner } from '@paddock/contracts';
import type { Page } from 'playwright-core';
import { ADMIN_ONLY_ROUTES } from '../../src/api/control-plane';
import { launchBrowser, NARROW, screenshots, WIDE, type Browser, type PageProblems } from './harness';

const CONSOLE_INDEX = join(__dirname, '..', '..', 'dist', 'index.html');

/**
 * The console in a real browser (Debian's Chromium driven by playwright-core) against the whole
 * platform started as `pnpm start` starts it: control plane (serving the console), gateway, and
 * controllers with the local driver running real runners (sandboxes under bubblewrap). Two
 * runners: `local` (whose policy the console edits) and `edge`. One browser and one platform for
 * the file; the steps run in order and build on each other, like a person's session.
 */
describe('the Paddock console in a browser', () => {
  let p: Platform;
  let browser: Browser;
  let page: Page;
  let problems: PageProblems;
  let sandboxId = '';
  let userToken = '';
  const consoleUrl = (path = ''): string => `${p.cp.url}/console/${path}`;
  const nav = () => page.getByRole('navigation', { name: 'Main' });
  const runner = async (id: string): Promise<ManagedRunner> => (await p.cpApi<ManagedRunner>('GET', `/v1/sandbox/managedRunners/${id}`)).json;
  const ready = async (id: string): Promise<boolean> => {
    const r = await runner(id);
    return r.installStatus === 'RUNNER_INSTALL_STATUS_READY' && r.connectionStatus === 'RUNNER_CONNECTION_STATUS_CONNECTED';
  };

  beforeAll(async () => {
    buildPackages(['@paddock/console'], [CONSOLE_INDEX]);
    p = await startPlatform();
    await p.startController('local', 'local', 'local');
    await p.startController('edge', 'edge-1', 'edge');
    await waitFor(async () => (await ready('local')) && (await ready('edge')), { timeoutMs: 150_000, what: 'runners local and edge READY and CONNECTED' });
    const edge = await runner('edge');
    const set = await p.cpApi('PATCH', '/v1/sandbox/managedRunners/edge?updateMask=policy', { policy: { constraints: { resources: { maxCpu: '4' } } }, etag: edge.etag });
    expect(set.status).toBe(200);
    browser = await launchBrowser();
    ({ page, problems } = await browser.newPage());
  }, 400_000);

  afterEach(() => {
    // Every step: no console error and no uncaught exception in the page.
    const seen = problems?.list.splice(0) ?? [];
    browser?.clearExpectedRefusals();
    expect(seen).toEqual([]);
  });

  afterAll(async () => {
    if (sandboxId) await p?.gwApi('DELETE', `/v1/sandboxes/${sandboxId}`).catch(() => undefined);
    await browser?.close();
    await p?.stop();
  });

  it('is built for the browser: the policy engine and the contracts bundle without any Node module', () => {
    const assets = join(__dirname, '..', '..', 'dist', 'assets');
    const js = readdirSync(assets).filter((f) => f.endsWith('.js'));
    expect(js.length).toBeGreaterThan(0);
    // Vite replaces a Node built-in it cannot bundle with this stub, which throws when used.
    for (const f of js) expect(readFileSync(join(assets, f), 'utf8')).not.toContain('__vite-browser-external');
  });

  it('refuses a wrong token, then signs in with the admin token and shows the organization and role', async () => {
    await page.goto(consoleUrl());
    await screenshots(page, 'signin');
    browser.expectRefusal(401, /\/v1\/auth\/whoami$/);
    await page.getByLabel('API token').fill('pdk_this-token-does-not-exist');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByRole('alert').innerText()).toContain('unauthenticated');

    await page.getByLabel('API token').fill(p.token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    const who = page.getByLabel('Signed in as');
    await expect.poll(() => who.innerText()).toContain('ADMIN');
    const whoami = await httpJson<{ organization: { name: string } }>(p.cp.url, 'GET', '/v1/auth/whoami', p.token);
    expect(await who.innerText()).toContain(whoami.json.organization.name);
    // The token lives in this tab's session storage only.
    expect(await page.evaluate(() => [sessionStorage.length, localStorage.length, document.cookie])).toEqual([1, 0, '']);
  });

  it('lists the runners and shows the local runner READY and CONNECTED', async () => {
    await expect.poll(() => page.url()).toBe(consoleUrl('runners'));
    const row = page.locator('tr[data-runner="local"]');
    await expect.poll(() => row.innerText(), { timeout: 15_000 }).toMatch(/READY[\s\S]*CONNECTED/);
    await screenshots(page, 'runners');
    await row.getByRole('link', { name: 'local' }).click();
    await expect.poll(() => page.getByRole('heading', { level: 1 }).innerText()).toBe('Runner local');
    await screenshots(page, 'runner');
  });

  it('edits the policy (maxCpu) with validation as you type, and saves it with the etag being edited', async () => {
    await page.getByRole('tab', { name: 'Policy' }).click();
    const before = await runner('local');
    await expect.poll(() => page.getByTestId('editing-etag').innerText()).toBe(before.etag);
    const editor = page.getByLabel('Policy document');
    await editor.fill('constraints:\n  resources:\n    maxCpu: lots\n');
    // The browser runs @paddock/policy's validator: the problem is named by field and rule.
    await expect.poll(() => page.locator('.policy-editor .violations').innerText()).toContain('constraints.resources.maxCpu');
    expect(await page.getByRole('button', { name: 'Save policy' }).isDisabled()).toBe(true);
    await editor.fill('constraints:\n  resources:\n    maxCpu: "1"\n');
    await expect.poll(() => page.locator('.policy-editor').innerText()).toContain('Valid policy');
    await screenshots(page, 'policy-editor');
    await page.getByRole('button', { name: 'Save policy' }).click();
    await expect.poll(() => page.getByRole('status').filter({ hasText: 'Saved' }).innerText()).toContain('new etag');
    const after = await runner('local');
    expect(after.policy).toEqual({ constraints: { resources: { maxCpu: '1' } } });
    expect(after.etag).not.toBe(before.etag);
    expect(await page.getByTestId('editing-etag').innerText()).toBe(after.etag);
  });

  it('refuses a save based on a stale etag with the conflict screen, shows the diff, and reapplies the edit on the current version', async () => {
    const editor = page.getByLabel('Policy document');
    await editor.fill('displayName: mine\nconstraints:\n  resources:\n    maxCpu: "1"\n');
    // Another admin changes the policy while this edit is open.
    const current = await runner('local');
    const other = await p.cpApi('PATCH', '/v1/sandbox/managedRunners/local?updateMask=policy', {
      policy: { displayName: 'edited elsewhere', constraints: { resources: { maxCpu: '1' } } },
      etag: current.etag,
    });
    expect(other.status).toBe(200);
    const theirs = await runner('local');
    browser.expectRefusal(400, /\/v1\/sandbox\/managedRunners\/local\?updateMask=policy$/);
    await page.getByRole('button', { name: 'Save policy' }).click();
    const conflict = page.locator('.conflict');
    await expect.poll(() => conflict.innerText()).toContain('Someone else changed this policy');
    const text = await conflict.innerText();
    expect(text).toContain(current.etag);
    expect(text).toContain(theirs.etag);
    expect(text).toMatch(/- displayName: edited elsewhere/);
    expect(text).toMatch(/\+ displayName: mine/);
    // Nothing of ours was written.
    expect((await runner('local')).policy?.displayName).toBe('edited elsewhere');
    await screenshots(page, 'policy-conflict');
    await page.getByRole('button', { name: `Reapply my edit on etag ${theirs.etag}` }).click();
    await expect.poll(() => page.getByRole('status').filter({ hasText: 'Saved' }).innerText()).toContain('new etag');
    const final = await runner('local');
    expect(final.policy).toEqual({ displayName: 'mine', constraints: { resources: { maxCpu: '1' } } });
  });

  it('shows the history and the diff between two revisions', async () => {
    await page.getByRole('tab', { name: 'History' }).click();
    const table = page.getByRole('table', { name: /Changes from revision/ });
    await expect.poll(() => table.innerText()).toContain('policy');
    expect(await table.innerText()).toMatch(/policy\.displayName\s+"edited elsewhere"\s+"mine"/);
    await screenshots(page, 'runner-history');
    await page.getByRole('tab', { name: 'Settings' }).click();
    await expect.poll(() => page.getByLabel('Channel').inputValue()).toBe('RELEASE_CHANNEL_STABLE');
    await screenshots(page, 'runner-settings');
  });

  it("explains a spec before creating it: one runner refuses it naming the constraint, the other would take it", async () => {
    // The gateway judges a runner by the policy the runner says (heartbeat) it applies.
    await waitFor(
      async () => {
        const x = await p.gwApi<ExplainPlacementResponse>('POST', '/v1/sandboxes:explain', { spec: { containers: [{ name: 'main', resources: { cpu: '2' } }] } });
        return x.json.verdicts.find((v) => v.runnerId === 'local')?.admitted === false;
      },
      { timeoutMs: 60_000, intervalMs: 500, what: 'the gateway judging local by the new policy' },
    );
    await nav().getByRole('link', { name: 'Sandboxes' }).click();
    await page.getByRole('link', { name: 'New sandbox' }).click();
    await page.getByLabel('CPU').fill('2');
    const local = page.locator('.verdicts li[data-runner="local"]');
    await expect.poll(() => local.innerText()).toContain('refuses');
    expect(await local.innerText()).toContain('constraints.resources.maxCpu');
    expect(await page.locator('.verdicts li[data-runner="edge"]').innerText()).toContain('admits');
    expect(await page.getByTestId('would-place-on').innerText()).toBe('edge');
    await screenshots(page, 'create-explain');
  });

  it('creates a sandbox, types echo hello in its terminal and reads hello back; the terminal follows resizes', async () => {
    await page.getByLabel('CPU').fill('500m');
    await page.getByLabel('Command (shell)').fill('i=0; while true; do echo tick $i; i=$((i+1)); sleep 1; done');
    await page.getByLabel('local').check();
    await expect.poll(() => page.getByTestId('would-place-on').innerText()).toBe('local');
    await page.getByRole('button', { name: 'Create sandbox' }).click();
    await expect.poll(() => page.url()).toMatch(/\/console\/sandboxes\/[0-9a-f-]{36}$/);
    sandboxId = page.url().split('/').pop() ?? '';
    await expect.poll(() => page.getByTestId('sandbox-state').innerText(), { timeout: 60_000 }).toContain('RUNNING');
    // The runner's resolution and the placement decision, as the gateway recorded them.
    await expect.poll(() => page.locator('.facts').innerText()).toContain('500m CPU');
    expect(await page.locator('.verdict-list').innerText()).toMatch(/local\s+admitted/);
    await screenshots(page, 'sandbox');

    await page.getByRole('tab', { name: 'Terminal' }).click();
    await expect.poll(() => page.locator('.terminal [role=status]').innerText(), { timeout: 20_000 }).toBe('Connected: /bin/sh');
    const rows = page.locator('.xterm-rows');
    await page.getByTestId('terminal').click();
    await page.keyboard.type('echo hello\n');
    // A line that is exactly "hello": the output, not the echoed command.
    await expect.poll(async () => (await rows.innerText()).split('\n').map((l) => l.trim()), { timeout: 15_000 }).toContain('hello');
    await screenshots(page, 'terminal');

    // Narrow the window: the terminal refits and tells the shell its new size.
    await page.setViewportSize(NARROW);
    await page.keyboard.type('stty size\n');
    await expect
      .poll(async () => {
        const sizes = (await rows.innerText()).split('\n').map((l) => /^(\d+) (\d+)$/.exec(l.trim())).filter((m) => m !== null);
        return Number(sizes.at(-1)?.[2] ?? 0);
      }, { timeout: 15_000 })
      .toBeLessThan(50);
    await page.setViewportSize(WIDE);
  });

  it('uploads a file and downloads it back, byte for byte', async () => {
    await page.getByRole('tab', { name: 'Files' }).click();
    const bytes = Buffer.concat([Buffer.from(Array.from({ length: 256 }, (_, i) => i)), randomBytes(200_000)]);
    await page.getByLabel(/Upload a file to/).setInputFiles({ name: 'blob.bin', mimeType: 'application/octet-stream', buffer: bytes });
    const row = page.locator('tr[data-file="blob.bin"]');
    await expect.poll(() => row.count(), { timeout: 15_000 }).toBe(1);
    // What the sandbox holds is exactly what was uploaded...
    const held = await fetch(`${p.gw.url}/v1/sandboxes/${sandboxId}/files?path=/workspace/blob.bin`, { headers: { authorization: `Bearer ${p.token}` } });
    expect(Buffer.from(await held.arrayBuffer()).equals(bytes)).toBe(true);
    // ...and what the browser downloads is exactly that too.
    const [download] = await Promise.all([page.waitForEvent('download'), row.getByRole('button', { name: 'Download blob.bin' }).click()]);
    expect(download.suggestedFilename()).toBe('blob.bin');
    const path = await download.path();
    expect(existsSync(path)).toBe(true);
    expect(readFileSync(path).equals(bytes)).toBe(true);
    await screenshots(page, 'files');
  });

  it('follows the logs as new output is written', async () => {
    await page.getByRole('tab', { name: 'Logs' }).click();
    expect(await page.getByLabel('Follow').isChecked()).toBe(true);
    const logs = page.getByTestId('logs');
    await expect.poll(() => logs.innerText(), { timeout: 15_000 }).toMatch(/tick \d+/);
    const last = (): Promise<number> => logs.innerText().then((t) => Math.max(...[...t.matchAll(/tick (\d+)/g)].map((m) => Number(m[1]))));
    const first = await last();
    // No reload, no click: the open stream brings the next lines.
    await expect.poll(last, { timeout: 15_000 }).toBeGreaterThanOrEqual(first + 2);
    await screenshots(page, 'logs');
  });

  it('stops the sandbox and shows its terminal state with the reason', async () => {
    await page.getByRole('button', { name: 'Stop', exact: true }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Stop sandbox' }).click();
    const state = page.getByTestId('sandbox-state');
    await expect.poll(() => state.innerText(), { timeout: 30_000 }).toMatch(/COMPLETED|FAILED/);
    expect(await state.innerText()).toContain('STOPPED_BY_USER');
    await screenshots(page, 'sandbox-stopped');
    await nav().getByRole('link', { name: 'Sandboxes' }).click();
    await page.getByLabel('Show ended').check();
    await expect.poll(() => page.locator(`tr[data-sandbox="${sandboxId}"]`).innerText()).toContain('STOPPED_BY_USER');
    await screenshots(page, 'sandboxes');
  });

  it('mints a token (its secret shown once) that works as a SANDBOX_USER', async () => {
    await nav().getByRole('link', { name: 'Tokens' }).click();
    await page.getByLabel('Name').fill('ci-user');
    await page.getByLabel('Role').selectOption('SANDBOX_USER');
    await page.getByRole('button', { name: 'Mint token' }).click();
    const secret = page.getByTestId('new-token');
    await expect.poll(() => secret.inputValue()).toMatch(/^pdk_/);
    userToken = await secret.inputValue();
    const who = await httpJson<{ role: string }>(p.cp.url, 'GET', '/v1/auth/whoami', userToken);
    expect(who.json.role).toBe('SANDBOX_USER');
    await screenshots(page, 'tokens');
    await page.getByRole('button', { name: 'Done, hide it' }).click();
    expect(await page.content()).not.toContain(userToken);
    expect(await page.locator('tr[data-token="ci-user"]').innerText()).toContain(userToken.slice(0, 8));
  });

  it('signed in as a SANDBOX_USER, shows no admin pages, and the API refuses every admin request the console could make', async () => {
    const user = await browser.newPage();
    await user.page.goto(consoleUrl());
    await user.page.getByLabel('API token').fill(userToken);
    await user.page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => user.page.getByLabel('Signed in as').innerText()).toContain('USER');
    await expect.poll(() => user.page.url()).toBe(consoleUrl('sandboxes'));
    const nav = await user.page.getByRole('navigation', { name: 'Main' }).innerText();
    expect(nav).toContain('Sandboxes');
    expect(nav).not.toContain('Runners');
    expect(nav).not.toContain('Tokens');
    await user.page.goto(consoleUrl('runners/local/policy'));
    await expect.poll(() => user.page.getByRole('heading', { level: 1 }).innerText()).toBe('Admins only');
    await screenshots(user.page, 'user-admin-only');
    expect(user.problems.list).toEqual([]);
    await user.page.close();

    const local = await runner('local');
    const tokens = (await p.cpApi<{ tokens: { id: string }[] }>('GET', '/v1/tokens')).json.tokens;
    for (const route of ADMIN_ONLY_ROUTES) {
      const path = route.path.replace('{runnerId}', 'local').replace('{tokenId}', tokens[0]?.id ?? '');
      const body: unknown = route.body === undefined ? undefined : JSON.parse(JSON.stringify(route.body).replace('{etag}', local.etag));
      const r = await httpJson<{ code: string }>(p.cp.url, route.method, path, userToken, body);
      expect({ route: `${route.method} ${path}`, status: r.status, code: r.json.code }).toEqual({ route: `${route.method} ${path}`, status: 403, code: 'permission_denied' });
    }
    // Nothing changed behind the refusals.
    expect((await runner('local')).etag).toBe(local.etag);
  });

  it('revokes the token, after which the API refuses it', async () => {
    const row = page.locator('tr[data-token="ci-user"]');
    await row.getByRole('button', { name: 'Revoke ci-user' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Revoke' }).click();
    await expect.poll(() => row.innerText()).toContain('revoked');
    expect((await httpJson(p.cp.url, 'GET', '/v1/auth/whoami', userToken)).status).toBe(401);
    // The gateway caches token lookups for GATEWAY_AUTH_CACHE_MS (5 s): the bound on revocation delay.
    await expect.poll(async () => (await httpJson(p.gw.url, 'GET', '/v1/sandboxes', userToken)).status, { timeout: 15_000 }).toBe(401);
  });
  it('upgrades a runner when a newer release is published on its channel', async () => {
    // An exclusion around now keeps the maintenance scheduler from starting the update itself.
    const hour = 3_600_000;
    const exclusions = [{ startTime: new Date(Date.now() - hour).toISOString(), endTime: new Date(Date.now() + hour).toISOString(), reason: 'console test' }];
    for (const id of ['local', 'edge']) {
      const r = await p.cpApi('PATCH', `/v1/sandbox/managedRunners/${id}?updateMask=spec.maintenance_policy`, { spec: { maintenancePolicy: { windows: [], exclusions } } });
      expect(r.status).toBe(200);
    }
    const before = await runner('edge');
    const newest = Number(before.targetRevision) + 1;
    const release = await p.cpApi('POST', '/v1/sandbox/releases', { channel: 'RELEASE_CHANNEL_STABLE', version: `9.${newest}.0`, image: `paddock/runner:9.${newest}.0` });
    expect(release.status).toBe(200);
    await nav().getByRole('link', { name: 'Runners' }).click();
    await page.locator('tr[data-runner="edge"]').getByRole('link', { name: 'edge' }).click();
    const upgrade = page.getByRole('button', { name: 'Upgrade now' });
    await expect.poll(() => upgrade.isEnabled(), { timeout: 10_000 }).toBe(true);
    await upgrade.click();
    await expect.poll(async () => Number((await runner('edge')).targetRevision)).toBeGreaterThan(Number(before.targetRevision));
  });

  it('deletes a runner only after its id is typed in the confirmation', async () => {
    await page.getByRole('button', { name: 'Delete runner' }).click();
    const dialog = page.getByRole('dialog');
    const confirm = dialog.getByRole('button', { name: 'Delete' });
    expect(await confirm.isDisabled()).toBe(true);
    await dialog.getByLabel(/Type edge to confirm/).fill('edge');
    await confirm.click();
    await expect.poll(() => page.url()).toBe(consoleUrl('runners'));
    // Decommissioning is asynchronous: the runner goes DELETING, then is gone.
    await expect.poll(async () => (await p.cpApi('GET', '/v1/sandbox/managedRunners/edge')).status, { timeout: 60_000 }).toBe(404);
    await expect.poll(() => page.locator('tr[data-runner="edge"]').count(), { timeout: 10_000 }).toBe(0);
  });
});
