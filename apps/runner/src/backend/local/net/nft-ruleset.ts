import { PaddockError } from '@paddock/contracts';
import type { EgressCidrRule } from '../../sandbox-backend';
import { blockContains, blocksOverlap, isIpv6Text, NEVER_REACHABLE, parseIpv4Cidr, PRIVATE_RANGES, type Ipv4Block } from './cidr';

/** Every sandbox veth on the machine, of any runner, starts with this (host side). */
export const SANDBOX_VETH_PREFIX = 'pdk';

/** What a sandbox may reach: everything public (unrestricted), or only its resolved CIDR grants. */
export type EgressGrant = { kind: 'unrestricted' } | { kind: 'cidrs'; rules: EgressCidrRule[] };

/** The names one runner's network objects carry; `tag` keeps two runners (or installations) apart. */
export interface RunnerNetNames {
  table: string;
  vethPrefix: string;
  linkBlock: Ipv4Block;
}

/** The point-to-point link of sandbox slot `index`: host side `.2i`, sandbox side `.2i+1`, a /31. */
export interface SandboxLink {
  index: number;
  veth: string;
  netns: string;
  chain: string;
  hostAddr: string;
  sandboxAddr: string;
}

const q = (s: string): string => JSON.stringify(s);
const SAFE_COMMENT = /^\/[A-Za-z0-9._/-]{1,120}$/;

/** The owner's state directory recorded on a runner table (`nft list table` text), if any. */
export function tableOwner(listing: string): string | undefined {
  const m = /^\s*comment "([^"]*)"/m.exec(listing);
  return m?.[1] && SAFE_COMMENT.test(m[1]) ? m[1] : undefined;
}
const set = (items: string[]): string => `{ ${items.join(', ')} }`;

/**
 * The runner's table, idempotent and atomic: the base chains are flushed and refilled in one
 * transaction, so the per-sandbox chains (and the verdict map that jumps to them) of adopted
 * sandboxes survive a runner restart.
 *
 * - input: nothing from a sandbox veth reaches the host itself (any of its addresses, any port,
 *   IPv4 or IPv6).
 * - forward: replies into a sandbox pass; nothing new enters any sandbox veth (no ingress, no
 *   sandbox-to-sandbox, of this runner or another); IPv6 from a sandbox is dropped; IPv4 from a
 *   sandbox goes to that sandbox's own chain (the verdict map), and a veth without one drops.
 * - postrouting: sandbox traffic leaving the host is masqueraded to the outgoing address.
 */
export function baseTableScript(n: RunnerNetNames, stateDir: string): string {
  const t = `inet ${n.table}`;
  const ours = q(`${n.vethPrefix}*`);
  const any = q(`${SANDBOX_VETH_PREFIX}*`);
  // The owner's state directory, so that a later runner can remove a table whose owner is gone for good.
  const owner = SAFE_COMMENT.test(stateDir) ? ` { comment ${q(stateDir)} ; }` : '';
  return [
    `add table ${t}${owner}`,
    `add map ${t} sandbox_chains { type ifname : verdict ; }`,
    `add chain ${t} input { type filter hook input priority -5 ; policy accept ; }`,
    `add chain ${t} forward { type filter hook forward priority -5 ; policy accept ; }`,
    `add chain ${t} postrouting { type nat hook postrouting priority 100 ; policy accept ; }`,
    `flush chain ${t} input`,
    `flush chain ${t} forward`,
    `flush chain ${t} postrouting`,
    `add rule ${t} input iifname ${ours} drop`,
    `add rule ${t} forward oifname ${any} ct state established,related accept`,
    `add rule ${t} forward oifname ${any} drop`,
    `add rule ${t} forward iifname ${ours} meta nfproto ipv4 iifname vmap @sandbox_chains`,
    `add rule ${t} forward iifname ${ours} drop`,
    `add rule ${t} postrouting ip saddr ${n.linkBlock.text} oifname != ${any} masquerade`,
    '',
  ].join('\n');
}

function refuse(field: string, rule: string, message: string): PaddockError {
  return new PaddockError('invalid_argument', message, {
    reason: 'CWSANDBOX_INVALID_REQUEST',
    violations: [{ field, rule, description: message }],
  });
}

function parseGrantBlock(text: string, field: string): Ipv4Block {
  if (isIpv6Text(text)) {
    throw refuse(field, 'ipv4_only', `${field} ${q(text)}: the local backend routes IPv4 only; an IPv6 egress grant cannot be enforced`);
  }
  const b = parseIpv4Cidr(text);
  if (!b) throw refuse(field, 'cidr', `${field} ${q(text)} is not an IPv4 CIDR block (a.b.c.d/n)`);
  return b;
}

/**
 * The private ranges a grant does not name: a grant inside 10.0.0.0/8 names that part of it, but a
 * wide grant (0.0.0.0/0, 8.0.0.0/5...) that merely contains a private range does not open it.
 */
function privateExclusions(c: Ipv4Block): Ipv4Block[] {
  return PRIVATE_RANGES.filter((p) => blocksOverlap(p, c) && !blockContains(p, c));
}

const PROTOCOLS = ['TCP', 'UDP', 'SCTP'] as const;

function portText(p: EgressCidrRule['ports'][number]): string {
  return p.endPort !== undefined && p.endPort > p.port ? `${p.port}-${p.endPort}` : String(p.port);
}

/** The accept rules of one grant: its block, minus its exceptions and unnamed private ranges, on its ports. */
function grantRules(r: EgressCidrRule, i: number): string[] {
  const field = `egress.rules[${i}].cidr`;
  const c = parseGrantBlock(r.cidr, `${field}.cidr`);
  if (NEVER_REACHABLE.some((n) => blockContains(n, c))) {
    throw refuse(`${field}.cidr`, 'reachable', `${field}.cidr ${q(r.cidr)} lies in a range no sandbox may reach (loopback, link-local/metadata, multicast, reserved or the sandbox links)`);
  }
  const excluded = [...r.except.map((e, j) => parseGrantBlock(e, `${field}.except[${j}]`)), ...privateExclusions(c)].map((b) => b.text);
  const dest = `ip daddr ${c.text}${excluded.length > 0 ? ` ip daddr != ${set(excluded)}` : ''}`;
  if (r.ports.length === 0) return [`${dest} accept`];
  return PROTOCOLS.flatMap((proto) => {
    const ports = r.ports.filter((p) => p.protocol === proto).map(portText);
    return ports.length > 0 ? [`${dest} meta l4proto ${proto.toLowerCase()} th dport ${set(ports)} accept`] : [];
  });
}

/**
 * One sandbox's chain and its verdict-map entry. It drops a forged source address, then every
 * range no sandbox may reach; then either public egress (DNS to the upstream resolvers, no
 * private range) or exactly the CIDR grants with their ports and exceptions — the meaning of a
 * Kubernetes NetworkPolicy `ipBlock` egress rule — and drops the rest.
 */
export function sandboxChainScript(n: RunnerNetNames, link: SandboxLink, egress: EgressGrant, resolvers: string[]): string {
  const t = `inet ${n.table}`;
  const body = [`ip saddr != ${link.sandboxAddr} drop`, `ip daddr ${set(NEVER_REACHABLE.map((b) => b.text))} drop`];
  if (egress.kind === 'unrestricted') {
    if (resolvers.length > 0) body.push(`ip daddr ${set(resolvers)} meta l4proto { tcp, udp } th dport 53 accept`);
    body.push(`ip daddr ${set(PRIVATE_RANGES.map((b) => b.text))} drop`, 'accept');
  } else {
    body.push(...egress.rules.flatMap(grantRules), 'drop');
  }
  return [
    `add chain ${t} ${link.chain}`,
    `flush chain ${t} ${link.chain}`,
    ...body.map((r) => `add rule ${t} ${link.chain} ${r}`),
    `add element ${t} sandbox_chains { ${q(link.veth)} : jump ${link.chain} }`,
    '',
  ].join('\n');
}

/** Validates the grants without building anything (a launch refuses before it creates a namespace). */
export function checkEgressGrant(egress: EgressGrant): void {
  if (egress.kind === 'cidrs') egress.rules.forEach(grantRules);
}
