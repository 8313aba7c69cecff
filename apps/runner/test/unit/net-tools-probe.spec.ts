import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SandboxNetworks } from '../../src/backend/local/net/sandbox-networks';

describe('local backend: the egress tools probe', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  /** A SandboxNetworks whose ip and nft are executables in a scratch dir, on a clock the test moves. */
  const setup = (): { net: SandboxNetworks; nft: string; clock: { ms: number } } => {
    const dir = mkdtempSync(join(tmpdir(), 'paddock-net-probe-'));
    dirs.push(dir);
    const [ip, nft] = [join(dir, 'ip'), join(dir, 'nft')];
    for (const tool of [ip, nft]) {
      writeFileSync(tool, '#!/bin/sh\n');
      chmodSync(tool, 0o755);
    }
    const clock = { ms: 0 };
    const net = new SandboxNetworks({
      runnerId: 'r-probe',
      stateDir: join(dir, 'state'),
      ipPath: ip,
      nftPath: nft,
      hostResolvConf: '/etc/resolv.conf',
      warmLinks: 0,
      nowMs: () => clock.ms,
    });
    return { net, nft, clock };
  };

  it('looks at the tools again once its last look is a second old, not on every create', () => {
    const { net, nft, clock } = setup();
    expect(net.available()).toBe(true);
    rmSync(nft);
    clock.ms += 999;
    // Within the second: the earlier look still answers (creates ask this on every admission).
    expect(net.available()).toBe(true);
    clock.ms += 2;
    expect(net.available()).toBe(false);
  });

  it('finds tools installed after a look that found none, within the second', () => {
    const { net, nft, clock } = setup();
    rmSync(nft);
    expect(net.available()).toBe(false);
    writeFileSync(nft, '#!/bin/sh\n');
    chmodSync(nft, 0o755);
    clock.ms += 500;
    expect(net.available()).toBe(false);
    clock.ms += 501;
    expect(net.available()).toBe(true);
  });
});
