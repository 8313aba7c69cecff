import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { NftSession } from '../../src/backend/local/net/nft-session';
import { processAlive } from '@paddock/testing';

/** The long-lived `nft -i` of the launch path, against the machine's real nftables (root). */
describe('local backend: nft session', () => {
  const table = `pdk_test_${randomBytes(3).toString('hex')}`;
  const t = `inet ${table}`;
  const nftPath = '/usr/sbin/nft';
  const listed = (): string => execFileSync(nftPath, ['list', 'table', 'inet', table], { encoding: 'utf8' });
  let nft: NftSession;

  beforeEach(() => {
    execFileSync(nftPath, ['add', 'table', 'inet', table]);
    nft = new NftSession(nftPath);
  });
  afterEach(() => {
    nft.close();
    execFileSync(nftPath, ['delete', 'table', 'inet', table]);
  });

  it('applies a script of several lines as one transaction, and answers what it lists', async () => {
    await nft.run(`add chain ${t} c1\nflush chain ${t} c1\nadd rule ${t} c1 ip saddr != 198.18.0.3 drop\nadd rule ${t} c1 accept\n`);
    expect(listed()).toMatch(/chain c1 \{\s+ip saddr != 198\.18\.0\.3 drop\s+accept\s+\}/);
    expect(await nft.run(`list chain ${t} c1`)).toContain('ip saddr != 198.18.0.3 drop');
  });

  it('refuses a script with a bad line with its error, applies none of it, and runs the next script', async () => {
    await expect(nft.run(`add chain ${t} c2\nadd rule ${t} c2 ip daddr not-an-address drop\n`)).rejects.toThrow(/^nft: Error: .*\n.*not-an-address/);
    expect(listed()).not.toContain('chain c2');
    await expect(nft.run(`delete chain ${t} absent`)).rejects.toThrow(/No such file or directory/);
    await nft.run(`add chain ${t} c3`);
    expect(listed()).toContain('chain c3');
  });

  it('runs concurrent scripts one at a time, each with its own outcome', async () => {
    const outcomes = await Promise.allSettled(
      Array.from({ length: 20 }, (_, i) => nft.run(i % 5 === 4 ? `delete chain ${t} never${i}` : `add chain ${t} k${i}`)),
    );
    expect(outcomes.map((o) => o.status)).toEqual(Array.from({ length: 20 }, (_, i) => (i % 5 === 4 ? 'rejected' : 'fulfilled')));
    const chains = listed().match(/chain k\d+/g) ?? [];
    expect(chains).toHaveLength(16);
  });

  it("runs nft with none of the runner's environment", async () => {
    process.env.PADDOCK_NFT_SESSION_TEST_SECRET = 'not-for-nft';
    try {
      await nft.run(`add chain ${t} e1`);
      const environ = readFileSync(`/proc/${nft.pid ?? 0}/environ`, 'utf8').split('\0').filter(Boolean);
      expect(environ.map((kv) => kv.split('=')[0]).sort()).toEqual(['LC_ALL', 'PATH', 'PWD']);
      expect(environ).toContain('PWD=/');
    } finally {
      delete process.env.PADDOCK_NFT_SESSION_TEST_SECRET;
    }
  });

  it('a script sent right after close() goes to a new process, and the old one ending does not fail it', async () => {
    await nft.run(`add chain ${t} r1`);
    const old = nft.pid ?? 0;
    nft.close();
    // Sent before the killed process's exit is seen.
    await nft.run(`add chain ${t} r2`);
    expect(nft.pid).not.toBe(old);
    await expect.poll(() => processAlive(old)).toBe(false);
    await nft.run(`add chain ${t} r3`);
    expect(listed()).toMatch(/chain r2[\s\S]*chain r3/);
  });

  it('starts another process when its own was killed, and close() leaves none', async () => {
    await nft.run(`add chain ${t} a1`);
    const first = nft.pid ?? 0;
    expect(processAlive(first)).toBe(true);
    process.kill(first, 'SIGKILL');
    await expect.poll(() => processAlive(first)).toBe(false);
    await nft.run(`add chain ${t} a2`);
    expect(listed()).toContain('chain a2');
    const second = nft.pid ?? 0;
    expect(second).not.toBe(first);
    nft.close();
    await expect.poll(() => processAlive(second)).toBe(false);
  });
});
