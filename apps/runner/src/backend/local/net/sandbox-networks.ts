import { createHash } from 'node:crypto';
import { accessSync, constants, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import { formatIpv4, parseIpv4, parseIpv4Cidr, SANDBOX_LINK_RANGE, type Ipv4Block } from './cidr';
import { baseTableScript, checkEgressGrant, sandboxChainScript, SANDBOX_VETH_PREFIX, tableOwner, type EgressGrant, type RunnerNetNames, type SandboxLink } from './nft-ruleset';
import { sandboxResolvConf } from './resolvers';
import type { CallActivity } from '../call-activity';
import { NftSession } from './nft-session';
import { runTool } from './run-tool';
import type { ToolRunner } from './tool-host';

/** How long `available()` trusts its last look at the tools. */
const PROBE_TTL_MS = 1_000;

export interface SandboxNetworksOptions {
  runnerId: string;
  stateDir: string;
  ipPath: string;
  nftPath: string;
  /** The host's resolver configuration the sandboxes' resolv.conf is derived from. */
  hostResolvConf: string;
  /** Links kept built ahead of demand (0: every egress launch builds its own). */
  warmLinks: number;
  /** The backend's calls: pre-builds wait (bounded) for them to pause. */
  activity?: CallActivity;
  /** Milliseconds of a monotonic clock (tests may drive it); `performance.now` otherwise. */
  nowMs?: () => number;
  /**
   * How `ip` and `nft` are run: the backend's tool host (ToolHost), so that no run forks the
   * runner's own process; a spawn of each otherwise (runTool).
   */
  runTool?: ToolRunner;
}

/** What a launch needs to put its sandbox on its link. */
export interface SandboxNetHandle {
  netnsPath: string;
  resolvConfPath: string;
}

interface LinkState {
  sandboxId: string;
  index: number;
}

/** Each runner numbers its sandbox links from its own block of the link range: 1024 /31 links. */
const BLOCK_PREFIX = 21;
const LINKS_PER_BLOCK = 2 ** (32 - BLOCK_PREFIX) / 2;
const BLOCKS = 2 ** (BLOCK_PREFIX - SANDBOX_LINK_RANGE.prefix);

/**
 * The network of the local backend's sandboxes that may egress: each in its own network
 * namespace, joined to the host by a veth pair numbered from the runner's block of 198.18.0.0/15,
 * NAT'ed out, and filtered by the runner's own nftables table (see nft-ruleset.ts).
 *
 * Crash safety: a link's state file (`<stateDir>/net/<sandboxId>.json`, its slot number) is
 * written before anything is created and removed only once everything is gone, and every object is
 * named from the runner's tag and that slot, so `sweep()` can remove whatever a crash left.
 */
export class SandboxNetworks {
  readonly names: RunnerNetNames;
  private readonly dir: string;
  private readonly tag: string;
  private ready?: Promise<string[]>;
  private readonly used = new Map<string, number>();
  private readonly pending = new Map<string, Promise<void>>();
  private readonly warm: { id: string; index: number }[] = [];
  private warmSeq = 0;
  private readonly building = new Set<string>();
  private refilling = false;
  private closed = false;
  private probed: { ok: boolean; atMs: number } | undefined;
  private readonly nowMs: () => number;
  private readonly tool: ToolRunner;
  /** The launch path's nft scripts (chains in, links out) go to one long-lived `nft -i`. */
  private readonly nft: NftSession;
  /** Egress launches so far: how many took a pre-built link, how many built their own. */
  readonly launches = { prebuilt: 0, inline: 0 };

  constructor(private readonly o: SandboxNetworksOptions) {
    this.nowMs = o.nowMs ?? (() => performance.now());
    this.tool = o.runTool ?? runTool;
    this.nft = new NftSession(o.nftPath);
    this.tag = createHash('sha256').update(`${o.runnerId}\0${o.stateDir}`).digest('hex').slice(0, 5);
    this.dir = join(o.stateDir, 'net');
    this.names = { table: `paddock_${this.tag}`, vethPrefix: `${SANDBOX_VETH_PREFIX}${this.tag}`, linkBlock: this.readBlock() ?? this.pickBlock() };
  }

  /**
   * Whether this machine has the tools (iproute2, nftables) to build egress links. Looked up at
   * most once a second: every create asks (through the backend's capabilities), and two path
   * lookups a create were a measurable part of a warm take's time on a busy machine, while the
   * tools being installed or removed shows within the second.
   */
  available(): boolean {
    const now = this.nowMs();
    if (this.probed && now - this.probed.atMs < PROBE_TTL_MS) return this.probed.ok;
    let ok = true;
    try {
      accessSync(this.o.ipPath, constants.X_OK);
      accessSync(this.o.nftPath, constants.X_OK);
    } catch {
      ok = false;
    }
    this.probed = { ok, atMs: now };
    return ok;
  }

  link(index: number): SandboxLink {
    const host = this.names.linkBlock.first + 2 * index;
    const slot = index.toString(16).padStart(3, '0');
    return {
      index,
      veth: `${this.names.vethPrefix}${slot}`,
      netns: `${this.names.vethPrefix}-${slot}`,
      chain: `sb${slot}`,
      hostAddr: formatIpv4(host),
      sandboxAddr: formatIpv4(host + 1),
    };
  }

  /** Builds the sandbox's namespace, link and rules; refuses grants it cannot enforce before creating anything. */
  async setup(sandboxId: string, egress: EgressGrant): Promise<SandboxNetHandle> {
    checkEgressGrant(egress);
    const resolvers = await this.init();
    const warm = this.takeWarm(sandboxId);
    const link = warm ?? this.link(this.allocate(sandboxId));
    this.launches[warm ? 'prebuilt' : 'inline']++;
    if (!warm) this.writeState(sandboxId, link.index);
    // The replacement is built while this launch goes on (its chain, the supervisor, bwrap), on the
    // CPU the launch leaves idle: refilled only after the launch, a stream of creates one after the
    // other outran the pool and nearly every launch built its own link inline.
    this.refillWarm();
    const chain = this.nft.run(sandboxChainScript(this.names, link, egress, resolvers));
    await Promise.all(warm ? [chain] : [this.build(link), chain]);
    return { netnsPath: `/run/netns/${link.netns}`, resolvConfPath: join(this.dir, 'resolv.conf') };
  }

  private writeState(id: string, index: number): void {
    writeFileSync(join(this.dir, `${id}.json`), JSON.stringify({ sandboxId: id, index } satisfies LinkState));
  }

  /** The namespace and its veth pair, addressed and routed; no verdict-map entry yet, so nothing passes. */
  private async build(link: SandboxLink): Promise<void> {
    const ip = this.o.ipPath;
    await this.tool(ip, ['-batch', '-'], [`netns add ${link.netns}`, `link add ${link.veth} type veth peer name eth0 netns ${link.netns}`, `addr add ${link.hostAddr}/31 dev ${link.veth}`, `link set ${link.veth} up`, ''].join('\n'));
    // No IPv6 on the host end: nothing from a sandbox is routed over IPv6 (the table drops it too).
    const v6 = `/proc/sys/net/ipv6/conf/${link.veth}/disable_ipv6`;
    if (existsSync(v6)) writeFileSync(v6, '1');
    await this.tool(ip, ['-n', link.netns, '-batch', '-'], [`addr add ${link.sandboxAddr}/31 dev eth0`, 'link set lo up', 'link set eth0 up', `route add default via ${link.hostAddr}`, ''].join('\n'));
  }

  /**
   * A pre-built link for `sandboxId`, or undefined. Its warm state file goes before the sandbox's
   * is written: a crash in between leaves objects no state file names, which sweep() removes,
   * never a live sandbox's link claimed by a stale warm entry.
   */
  private takeWarm(sandboxId: string): SandboxLink | undefined {
    const w = this.warm.shift();
    if (!w) return undefined;
    rmSync(join(this.dir, `${w.id}.json`), { force: true });
    this.used.delete(w.id);
    this.used.set(sandboxId, w.index);
    this.writeState(sandboxId, w.index);
    return this.link(w.index);
  }

  /**
   * Keeps `warmLinks` links built ahead of demand (namespace, veth, addresses and route take two
   * `ip` runs; a launch that takes a warm link only adds its nftables chain). Started by the
   * first egress launch, so a runner that never grants egress builds none, and again by each
   * launch as it takes a link. Launches do not hold it back; exec and file calls do (CallActivity).
   */
  private refillWarm(): void {
    if (this.refilling || this.closed) return;
    this.refilling = true;
    void (async () => {
      try {
        while (!this.closed && this.warm.length < this.o.warmLinks) {
          // Off the path of the calls being served (the launch that took a link, its first commands).
          await this.o.activity?.quiet(() => this.closed);
          if (this.closed) break;
          const id = `_warm-${process.pid}-${++this.warmSeq}`;
          this.building.add(id);
          try {
            const index = this.allocate(id);
            this.writeState(id, index);
            await this.build(this.link(index));
            if (this.closed) await this.teardown(id);
            else this.warm.push({ id, index });
          } finally {
            this.building.delete(id);
          }
        }
      } catch {
        // a failed pre-build is swept like any leftover; launches build their own meanwhile
      } finally {
        this.refilling = false;
      }
    })();
  }

  /** Links built and waiting for a launch (test and operator helper). */
  warmCount(): number {
    return this.warm.length;
  }

  /** Removes the sandbox's rules, link and namespace (idempotent; concurrent calls share one run). */
  teardown(sandboxId: string): Promise<void> {
    const running = this.pending.get(sandboxId);
    if (running) return running;
    const p = this.removeLink(sandboxId).finally(() => this.pending.delete(sandboxId));
    this.pending.set(sandboxId, p);
    return p;
  }

  private async removeLink(sandboxId: string): Promise<void> {
    const file = join(this.dir, `${sandboxId}.json`);
    let state: LinkState;
    try {
      state = JSON.parse(readFileSync(file, 'utf8')) as LinkState;
    } catch {
      this.used.delete(sandboxId);
      return;
    }
    await this.removeObjects(this.link(state.index));
    rmSync(file, { force: true });
    this.used.delete(sandboxId);
  }

  private async removeObjects(link: SandboxLink): Promise<void> {
    const t = `inet ${this.names.table}`;
    // The map entry first: from then on the veth's traffic drops, whatever is still in the namespace.
    // One transaction when both exist (the usual case); a missing entry fails it, so then one by one.
    const element = `delete element ${t} sandbox_chains { ${JSON.stringify(link.veth)} }\n`;
    const chain = `add chain ${t} ${link.chain}\nflush chain ${t} ${link.chain}\ndelete chain ${t} ${link.chain}\n`;
    await this.nft.run(element + chain).catch(async () => {
      await this.nft.run(element).catch(() => undefined);
      await this.nft.run(chain).catch(() => undefined);
    });
    await this.tool(this.o.ipPath, ['-force', '-batch', '-'], `link del ${link.veth}\nnetns del ${link.netns}\n`).catch(() => undefined);
    if (existsSync(`/sys/class/net/${link.veth}`) || existsSync(`/run/netns/${link.netns}`)) {
      throw new Error(`could not remove the network of sandbox link ${link.index} (${link.veth}, netns ${link.netns})`);
    }
  }

  /**
   * Removes the links of every sandbox not in `keep`, and any object of this runner (veth,
   * namespace, chain) no state file accounts for: what a crash in the middle of a setup left.
   */
  async sweep(keep: Set<string>): Promise<void> {
    if (!existsSync(this.dir)) return;
    // The state files name the links of adopted sandboxes: read them before anything counts as a stray.
    await this.init();
    const ours = new Set([...keep, ...this.warm.map((w) => w.id), ...this.building]);
    for (const f of readdirSync(this.dir)) {
      if (f.endsWith('.json') && f !== 'block.json' && !ours.has(f.slice(0, -5))) await this.teardown(f.slice(0, -5));
    }
    const live = new Set([...this.used.values()].map((i) => this.link(i).veth));
    const strays = new Set<number>();
    const slotOf = (name: string, prefix: string): void => {
      if (name.startsWith(prefix) && !live.has(`${this.names.vethPrefix}${name.slice(prefix.length)}`)) strays.add(parseInt(name.slice(prefix.length), 16));
    };
    for (const n of readdirSync('/sys/class/net')) slotOf(n, this.names.vethPrefix);
    if (existsSync('/run/netns')) for (const n of readdirSync('/run/netns')) slotOf(n, `${this.names.vethPrefix}-`);
    for (const c of await this.chains()) slotOf(c, 'sb');
    for (const i of strays) if (Number.isInteger(i)) await this.removeObjects(this.link(i));
  }

  /** Drops the runner's table once no sandbox link is left (the runner is stopping or idle). */
  async dispose(): Promise<void> {
    this.closed = true;
    while (this.refilling) await new Promise((r) => setTimeout(r, 10));
    for (const w of this.warm.splice(0)) await this.teardown(w.id);
    this.nft.close();
    if (!this.available() || this.hasLinks()) return;
    await this.tool(this.o.nftPath, ['-f', '-'], `add table inet ${this.names.table}\ndelete table inet ${this.names.table}\n`);
    rmSync(this.dir, { recursive: true, force: true });
    this.ready = undefined;
  }

  private hasLinks(): boolean {
    return existsSync(this.dir) && readdirSync(this.dir).some((f) => f.endsWith('.json') && f !== 'block.json');
  }

  /** The chain names in this runner's table (none when the table does not exist). */
  async chains(): Promise<string[]> {
    const out = await this.tool(this.o.nftPath, ['-j', 'list', 'table', 'inet', this.names.table]).catch(() => '');
    if (!out) return [];
    const parsed = JSON.parse(out) as { nftables: { chain?: { name: string } }[] };
    return parsed.nftables.flatMap((e) => (e.chain ? [e.chain.name] : []));
  }

  /** Once per runner process: state directory, forwarding, the table and the sandboxes' resolv.conf. */
  private init(): Promise<string[]> {
    this.ready ??= (async () => {
      mkdirSync(this.dir, { recursive: true, mode: 0o711 });
      writeFileSync(join(this.dir, 'block.json'), JSON.stringify({ block: this.names.linkBlock.text }));
      for (const f of readdirSync(this.dir)) {
        if (!f.endsWith('.json') || f === 'block.json') continue;
        try {
          const s = JSON.parse(readFileSync(join(this.dir, f), 'utf8')) as LinkState;
          this.used.set(s.sandboxId, s.index);
        } catch {
          // a torn state file: its slot is found again by sweep() (by name)
        }
      }
      // Egress is routed: the host forwards the sandboxes' packets (only theirs are NAT'ed).
      if (readFileSync('/proc/sys/net/ipv4/ip_forward', 'utf8').trim() !== '1') writeFileSync('/proc/sys/net/ipv4/ip_forward', '1');
      await this.removeAbandoned();
      await this.tool(this.o.nftPath, ['-f', '-'], baseTableScript(this.names, this.o.stateDir));
      let hostConf = '';
      try {
        hostConf = readFileSync(this.o.hostResolvConf, 'utf8');
      } catch {
        // no resolver configured: the sandboxes get none either
      }
      const { text, resolvers } = sandboxResolvConf(hostConf, hostAddresses());
      writeFileSync(join(this.dir, 'resolv.conf'), text, { mode: 0o644 });
      return resolvers;
    })();
    this.ready.catch(() => (this.ready = undefined));
    return this.ready;
  }

  /**
   * Tables (and their veths and namespaces) of runners whose state directory no longer exists:
   * no runner can come back to them (their sandboxes' supervisors were killed with the directory,
   * e.g. by a test that removed it, or a crash followed by a wipe), so nobody else would clean them.
   */
  private async removeAbandoned(): Promise<void> {
    const tables = (await this.tool(this.o.nftPath, ['list', 'tables'])).split('\n').flatMap((l) => /^table inet (paddock_[0-9a-f]{5})$/.exec(l.trim())?.[1] ?? []);
    for (const table of tables) {
      if (table === this.names.table) continue;
      const owner = tableOwner(await this.tool(this.o.nftPath, ['list', 'table', 'inet', table]).catch(() => ''));
      if (!owner || existsSync(owner)) continue;
      const prefix = `${SANDBOX_VETH_PREFIX}${table.slice('paddock_'.length)}`;
      const lines = [
        ...readdirSync('/sys/class/net').filter((n) => n.startsWith(prefix)).map((n) => `link del ${n}`),
        ...(existsSync('/run/netns') ? readdirSync('/run/netns').filter((n) => n.startsWith(`${prefix}-`)).map((n) => `netns del ${n}`) : []),
      ];
      if (lines.length > 0) await this.tool(this.o.ipPath, ['-force', '-batch', '-'], `${lines.join('\n')}\n`).catch(() => undefined);
      await this.tool(this.o.nftPath, ['delete', 'table', 'inet', table]).catch(() => undefined);
    }
  }

  private allocate(sandboxId: string): number {
    const taken = new Set(this.used.values());
    for (let i = 0; i < LINKS_PER_BLOCK; i++) {
      if (!taken.has(i)) {
        this.used.set(sandboxId, i);
        return i;
      }
    }
    throw new Error(`all ${LINKS_PER_BLOCK} sandbox links of runner ${this.o.runnerId} are in use`);
  }

  private readBlock(): Ipv4Block | undefined {
    try {
      const b = parseIpv4Cidr((JSON.parse(readFileSync(join(this.dir, 'block.json'), 'utf8')) as { block: string }).block);
      return b && b.prefix === BLOCK_PREFIX ? b : undefined;
    } catch {
      return undefined;
    }
  }

  /** The runner's block: from its tag, skipping any block where another interface has an address. */
  private pickBlock(): Ipv4Block {
    const inUse = Object.entries(networkInterfaces()).flatMap(([name, addrs]) =>
      name.startsWith(`${SANDBOX_VETH_PREFIX}${this.tag}`) ? [] : (addrs ?? []).flatMap((a) => (a.family === 'IPv4' ? [parseIpv4(a.address) ?? -1] : [])),
    );
    const start = parseInt(this.tag, 16) % BLOCKS;
    for (let k = 0; k < BLOCKS; k++) {
      const first = SANDBOX_LINK_RANGE.first + ((start + k) % BLOCKS) * 2 ** (32 - BLOCK_PREFIX);
      const last = first + 2 ** (32 - BLOCK_PREFIX) - 1;
      if (!inUse.some((a) => a >= first && a <= last)) return { text: `${formatIpv4(first)}/${BLOCK_PREFIX}`, first, last, prefix: BLOCK_PREFIX };
    }
    throw new Error('every block of 198.18.0.0/15 already has addresses on this host: no room for sandbox links');
  }
}

/** Every address of the host's interfaces (a resolver on one of them is the host itself). */
function hostAddresses(): Set<string> {
  return new Set(Object.values(networkInterfaces()).flatMap((addrs) => (addrs ?? []).map((a) => a.address)));
}
