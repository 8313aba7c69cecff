import { readFileSync, writeFileSync } from 'node:fs';
import type * as Sdk from '@paddock/sdk';
import type { Ctx } from '../context';
import { CliError, EXIT, UsageError, exitCodeForApiCode, violationLine } from '../errors';
import { isRecord, parseDocument, readInput } from '../input';
import { waitShowingCreation } from './creation-progress';
import { loadCase, loadSdk } from '../lazy';
import { age, parseOutputFormat, renderTable, shortEnum, toJson, toYaml } from '../output';

const sdk = loadSdk;

/** Accepts `ID` or `sandbox/ID` (what `-o name` prints). */
const idOf = (ref: string): string => ref.replace(/^sandbox\//, '');

function clientOpts(ctx: Ctx): { baseUrl: string; apiKey: string } {
  const s = ctx.settings();
  if (!s.token) throw new CliError('unauthenticated: no API token; run `cwic auth login` or set PADDOCK_API_KEY', EXIT.refused);
  return { baseUrl: s.gatewayUrl, apiKey: s.token };
}

/** Maps SDK errors to the CLI's `Error: <doing>: <code>: <message>` and exit codes. */
async function doing<T>(what: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    if (e instanceof CliError) throw e;
    const m = await sdk();
    if (e instanceof m.PaddockError) {
      const details = (e.violations ?? []).map((v) => `\n${violationLine(v.field, v.description)}`).join('');
      throw new CliError(`${what}: ${e.code}: ${e.message}${details}`, exitCodeForApiCode(e.code));
    }
    throw new CliError(`${what}: ${e instanceof Error ? e.message : String(e)}`, EXIT.refused);
  }
}

function printSandboxes(ctx: Ctx, list: Sdk.SandboxResource[], output: string | undefined): void {
  const format = parseOutputFormat(output);
  if (format === 'json') return ctx.out(toJson(list));
  if (format === 'yaml') return ctx.out(toYaml(list));
  if (format === 'name') return list.length ? ctx.out(list.map((s) => `sandbox/${s.sandboxId}`).join('\n')) : undefined;
  const wide = format === 'wide';
  const headers = ['id', 'state', 'runner', 'age', ...(wide ? ['reason', 'exit', 'tags'] : [])];
  const rows = list.map((s) => [
    s.sandboxId,
    shortEnum(s.status.state, 'STATE_'),
    s.status.runnerId || '-',
    age(s.status.createTime),
    ...(wide ? [s.status.stateReason ?? '-', s.status.exitCode === undefined ? '-' : String(s.status.exitCode), (s.spec.tags ?? []).join(',') || '-'] : []),
  ]);
  if (rows.length === 0) return void ctx.io.stderr('No sandboxes found.\n');
  ctx.out(renderTable(headers, rows));
}

export interface CreateFlags {
  file?: string;
  image?: string;
  cpu?: string;
  memory?: string;
  lifetime?: string;
  tag?: string[];
  runnerId?: string[];
  env?: string[];
  port?: string[];
  wait?: boolean;
  requestId?: string;
  output?: string;
}

function parseEnvPairs(pairs: string[] | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const p of pairs ?? []) {
    const i = p.indexOf('=');
    if (i <= 0) throw new UsageError(`--env expects KEY=VALUE, got "${p}"`);
    out[p.slice(0, i)] = p.slice(i + 1);
  }
  return out;
}

function portsOf(values: string[] | undefined): number[] {
  return (values ?? []).flatMap((v) => v.split(',')).map((v) => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < 1 || n > 65_535) throw new UsageError(`--port expects a port number (1-65535), got "${v}"`);
    return n;
  });
}

async function buildSpec(ctx: Ctx, o: CreateFlags, command: string[]): Promise<Sdk.SandboxSpec> {
  let spec: Record<string, unknown> = {};
  if (o.file) {
    const parsed = parseDocument(readInput(o.file, ctx.io.readStdin), o.file === '-' ? 'stdin' : o.file);
    if (!isRecord(parsed)) throw new UsageError('a sandbox spec must be a mapping');
    spec = (await loadCase()).snakeToCamelDeep(parsed) as Record<string, unknown>;
  }
  const containers = Array.isArray(spec.containers) ? (spec.containers as Record<string, unknown>[]) : [{ name: 'main' }];
  const main = { ...(containers[0] ?? { name: 'main' }) };
  if (o.image) main.image = o.image;
  if (command.length) {
    main.command = command[0];
    main.args = command.slice(1);
  }
  if (o.cpu || o.memory) main.resources = { ...(isRecord(main.resources) ? main.resources : {}), ...(o.cpu ? { cpu: o.cpu } : {}), ...(o.memory ? { memory: o.memory } : {}) };
  const env = parseEnvPairs(o.env);
  if (Object.keys(env).length) main.environmentVariables = { ...(isRecord(main.environmentVariables) ? main.environmentVariables : {}), ...env };
  spec.containers = [main, ...containers.slice(1)];
  if (o.lifetime) spec.maxLifetimeSeconds = Number(o.lifetime);
  const ports = portsOf(o.port);
  if (ports.length) {
    const declared = Array.isArray(spec.services) ? (spec.services as Record<string, unknown>[]) : [];
    spec.services = [...declared, ...ports.map((port) => ({ port, visibility: 'VISIBILITY_PUBLIC', endpoint: { kind: 'ENDPOINT_KIND_HTTPS', auth: 'ENDPOINT_AUTH_OPEN' } }))];
  }
  if (o.tag?.length) spec.tags = [...(Array.isArray(spec.tags) ? (spec.tags as string[]) : []), ...o.tag];
  if (o.runnerId?.length) {
    spec.runnerIds = o.runnerId;
    // Runner ids name the organization's own runners, which is what SANDBOX_MODE_CKS means (the SDK's runnerIds option does the same).
    spec.mode ??= 'SANDBOX_MODE_CKS';
  }
  return spec;
}

async function execCmd(ctx: Ctx, ref: string, command: string[], o: { cwd?: string; env?: string[]; timeout?: string; tty?: boolean }): Promise<number> {
  if (command.length === 0) throw new UsageError('no command: cwic sandbox exec ID -- CMD [ARGS...]');
  const m = await sdk();
  const sb = await doing(`getting sandbox ${ref}`, () => m.Sandbox.fromId(idOf(ref), clientOpts(ctx)));
  const proc = sb.exec(command, {
    cwd: o.cwd,
    env: parseEnvPairs(o.env),
    timeoutSeconds: o.timeout ? Number(o.timeout) : undefined,
    stdin: !ctx.io.stdinIsTTY && !o.tty ? true : Boolean(o.tty),
    tty: o.tty,
  });
  // Stream output as it comes; stdin (when piped) flows into the command.
  const pump = async (chan: AsyncIterable<Buffer>, write: (b: Buffer) => void): Promise<void> => {
    for await (const chunk of chan) write(chunk);
  };
  const outDone = pump(proc.stdout, (b) => void process.stdout.write(b));
  const errDone = pump(proc.stderr, (b) => void process.stderr.write(b));
  if (!ctx.io.stdinIsTTY && !o.tty) {
    void (async () => {
      try {
        for await (const chunk of process.stdin) await proc.stdin.write(chunk as Buffer);
      } finally {
        await proc.stdin.close().catch(() => undefined);
      }
    })();
  }
  const result = await doing(`executing in sandbox ${ref}`, () => proc.result());
  await Promise.all([outDone, errDone]);
  if (result.timedOut) {
    ctx.io.stderr(`Error: executing in sandbox ${ref}: deadline_exceeded: command timed out\n`);
    return 124;
  }
  return result.exitCode;
}

async function shCmd(ctx: Ctx, ref: string, o: { cmd?: string }): Promise<number> {
  const m = await sdk();
  const sb = await doing(`getting sandbox ${ref}`, () => m.Sandbox.fromId(idOf(ref), clientOpts(ctx)));
  const tty = process.stdin.isTTY;
  const proc = sb.exec(['/bin/sh', ...(o.cmd ? ['-c', o.cmd] : ['-i'])], { stdin: true, tty, cols: process.stdout.columns, rows: process.stdout.rows });
  if (tty) process.stdin.setRawMode(true);
  const onResize = (): void => void proc.resize(process.stdout.columns, process.stdout.rows).catch(() => undefined);
  process.stdout.on('resize', onResize);
  const onData = (d: Buffer): void => void proc.stdin.write(d);
  process.stdin.on('data', onData);
  process.stdin.once('end', () => void proc.stdin.close());
  const pump = async (chan: AsyncIterable<Buffer>, write: (b: Buffer) => void): Promise<void> => {
    for await (const chunk of chan) write(chunk);
  };
  const outDone = pump(proc.stdout, (b) => void process.stdout.write(b));
  const errDone = pump(proc.stderr, (b) => void process.stderr.write(b));
  try {
    const r = await doing(`opening a shell in ${ref}`, () => proc.result());
    await Promise.all([outDone, errDone]);
    return r.exitCode;
  } finally {
    process.stdin.off('data', onData);
    process.stdout.off('resize', onResize);
    if (tty) process.stdin.setRawMode(false);
    process.stdin.pause();
  }
}

function splitRemote(arg: string): { sandbox?: string; path: string } {
  const m = /^([^/:][^:]*):(\/.*)$/.exec(arg);
  return m ? { sandbox: m[1], path: m[2] as string } : { path: arg };
}

export async function createSandbox(ctx: Ctx, command: string[], o: CreateFlags): Promise<void> {
  const m = await sdk();
  const spec = await buildSpec(ctx, o, command);
  const sb = await doing('creating sandbox', () => m.Sandbox.create(spec, { ...clientOpts(ctx), requestId: o.requestId }));
  if (o.wait) {
    // A second handle reads the status while the first one long-polls, so the pull's progress shows.
    let watcher: Promise<Sdk.Sandbox> | undefined;
    const readStatus = async (): Promise<Sdk.SandboxResource['status']> => (await (watcher ??= m.Sandbox.fromId(sb.sandboxId, clientOpts(ctx)))).refresh().then((r) => r.status);
    await waitShowingCreation(ctx, sb.sandboxId, () => doing(`waiting for sandbox ${sb.sandboxId}`, () => sb.wait()), readStatus);
  }
  if (o.output === 'name') {
    ctx.out(`sandbox/${sb.sandboxId}`);
    // The URLs are assigned at create: printed at once, served once the sandbox runs.
    for (const port of portsOf(o.port)) ctx.out(`port ${port}: ${sb.serviceUrl(port) ?? '(no URL assigned)'}`);
    return;
  }
  printSandboxes(ctx, [await sb.refresh()], o.output);
}

/**
 * `cwic sandbox run`: create a sandbox whose main process is COMMAND, stream its output as it
 * comes, exit with its exit code, and stop the sandbox whatever happens (Ctrl-C included), so
 * repeated runs never pile up sandboxes that hold the runner's capacity.
 */
export async function runSandbox(ctx: Ctx, command: string[], o: CreateFlags): Promise<void> {
  if (command.length === 0) throw new UsageError('no command: cwic sandbox run [--image IMAGE] -- CMD [ARGS...]');
  const m = await sdk();
  const spec = await buildSpec(ctx, o, command);
  const sb = await doing('creating sandbox', () => m.Sandbox.create(spec, { ...clientOpts(ctx), requestId: o.requestId }));
  const interrupt = (): void => {
    process.exitCode = 130;
    void sb.stop({ gracePeriodSeconds: 0, missingOk: true, wait: false }).finally(() => process.exit(130));
  };
  process.once('SIGINT', interrupt);
  process.once('SIGTERM', interrupt);
  try {
    await doing(`starting sandbox ${sb.sandboxId}`, async () => {
      // A command that exits non-zero at once ends FAILED (EXITED) before it was seen running:
      // that is its outcome to report, with its output, not a failure to start.
      await ctx.withProgress(`starting sandbox ${sb.sandboxId}`, () => sb.wait()).catch((e: unknown) => {
        if (sb.status.stateReason !== 'EXITED') throw e;
      });
      for await (const entry of sb.logs({ follow: true })) (entry.stream === 'stderr' ? process.stderr : process.stdout).write(entry.data);
    });
    await doing(`running sandbox ${sb.sandboxId}`, () => sb.waitUntilComplete({ raiseOnTermination: false }));
    const s = sb.status;
    if (s.stateReason && s.stateReason !== 'EXITED') throw new CliError(`running sandbox ${sb.sandboxId}: ${s.stateReason}${s.message ? `: ${s.message}` : ''}`, EXIT.refused);
    const code = s.exitCode ?? 0;
    if (code !== 0) throw new CliError('', code);
  } finally {
    process.off('SIGINT', interrupt);
    process.off('SIGTERM', interrupt);
    await sb.stop({ gracePeriodSeconds: 0, missingOk: true, wait: false }).catch(() => undefined);
  }
}

export async function listSandboxes(ctx: Ctx, o: { tag?: string[]; state?: string; runnerId?: string[]; all?: boolean; output?: string }): Promise<void> {
  const m = await sdk();
  const state = o.state ? (o.state.startsWith('STATE_') ? o.state : `STATE_${o.state.toUpperCase()}`) : undefined;
  const list = await doing('listing sandboxes', () => m.Sandbox.list({ ...clientOpts(ctx), tags: o.tag, state, runnerIds: o.runnerId, showTerminated: o.all }));
  printSandboxes(ctx, list.map((s) => ({ sandboxId: s.sandboxId, spec: s.spec, status: s.status })), o.output);
}

export async function getSandbox(ctx: Ctx, ref: string, o: { output?: string }): Promise<void> {
  const m = await sdk();
  const sb = await doing(`getting sandbox ${ref}`, () => m.Sandbox.fromId(idOf(ref), clientOpts(ctx)));
  printSandboxes(ctx, [{ sandboxId: sb.sandboxId, spec: sb.spec, status: sb.status }], o.output);
}

export async function execSandbox(ctx: Ctx, ref: string, command: string[], o: { cwd?: string; env?: string[]; timeout?: string; tty?: boolean }): Promise<void> {
  process.exitCode = await execCmd(ctx, ref, command, o);
  if (process.exitCode !== 0) throw new CliError('', process.exitCode);
}

export async function shSandbox(ctx: Ctx, ref: string, o: { cmd?: string }): Promise<void> {
  const code = await shCmd(ctx, ref, o);
  if (code !== 0) throw new CliError('', code);
}

export async function sandboxLogs(ctx: Ctx, ref: string, o: { follow?: boolean; tail?: string; since?: string; fromOffset?: string }): Promise<void> {
  const m = await sdk();
  const sb = await doing(`getting sandbox ${ref}`, () => m.Sandbox.fromId(idOf(ref), clientOpts(ctx)));
  let since: string | undefined = o.since;
  const dur = o.since ? /^(\d+)([smh])$/.exec(o.since) : null;
  if (dur) since = new Date(Date.now() - Number(dur[1]) * { s: 1e3, m: 6e4, h: 36e5 }[dur[2] as 's' | 'm' | 'h']).toISOString();
  await doing(`reading logs of ${ref}`, async () => {
    for await (const entry of sb.logs({ follow: o.follow, tailLines: o.tail ? Number(o.tail) : undefined, sinceTime: since, fromOffset: o.fromOffset ? Number(o.fromOffset) : undefined })) {
      (entry.stream === 'stderr' ? process.stderr : process.stdout).write(entry.data);
    }
  });
}

export async function copyFile(ctx: Ctx, src: string, dst: string): Promise<void> {
  const m = await sdk();
  const from = splitRemote(src);
  const to = splitRemote(dst);
  if (Boolean(from.sandbox) === Boolean(to.sandbox)) throw new UsageError('exactly one of SRC and DST must be SANDBOX-ID:/path');
  if (to.sandbox) {
    const sb = await doing(`getting sandbox ${to.sandbox}`, () => m.Sandbox.fromId(idOf(to.sandbox as string), clientOpts(ctx)));
    const data = from.path === '-' ? readFileSync(0) : readFileSync(from.path);
    await doing(`writing ${to.path}`, () => sb.writeFile(to.path, data));
  } else {
    const sb = await doing(`getting sandbox ${from.sandbox ?? ''}`, () => m.Sandbox.fromId(idOf(from.sandbox as string), clientOpts(ctx)));
    const data = await doing(`reading ${from.path}`, () => sb.readFile(from.path));
    if (to.path === '-') process.stdout.write(data);
    else writeFileSync(to.path, data);
  }
}

export interface StopFlags {
  grace?: string;
  missingOk?: boolean;
  /** Every live sandbox of the organization. */
  all?: boolean;
  /** Every live sandbox carrying all of these tags. */
  tag?: string[];
}

export async function stopSandboxes(ctx: Ctx, refs: string[], o: StopFlags): Promise<void> {
  const m = await sdk();
  const bulk = o.all || (o.tag?.length ?? 0) > 0;
  if (bulk && refs.length) throw new UsageError('give sandbox ids, or --all, or --tag, not several of them');
  if (o.all && o.tag?.length) throw new UsageError('--all and --tag cannot be combined');
  if (!bulk && refs.length === 0) throw new UsageError('which sandboxes? give their ids, --tag TAG... or --all');
  if (bulk) {
    const what = o.all ? 'every sandbox' : `sandboxes tagged ${(o.tag ?? []).join(', ')}`;
    const r = await doing(`stopping ${what}`, () => m.Sandbox.purge(o.all ? { ...clientOpts(ctx), purgeAll: true } : { ...clientOpts(ctx), tags: o.tag ?? [] }));
    ctx.out(`${r.purgeCount} sandbox${r.purgeCount === 1 ? '' : 'es'} stopped`);
    if (r.failedSandboxIds.length) {
      throw new CliError(`stopping ${what}: could not stop ${r.failedSandboxIds.join(', ')}${r.retryableFailedSandboxIds.length ? ' (run the command again to retry)' : ''}`, EXIT.refused);
    }
    return;
  }
  for (const ref of refs) {
    await doing(`stopping sandbox ${ref}`, () => m.Sandbox.delete(idOf(ref), { ...clientOpts(ctx), missingOk: o.missingOk, gracePeriodSeconds: o.grace ? Number(o.grace) : undefined }));
    ctx.out(`sandbox/${idOf(ref)} stopped`);
  }
}

export async function explainPlacement(ctx: Ctx, o: { file: string; output?: string }): Promise<void> {
  const m = await sdk();
  const spec = await buildSpec(ctx, { file: o.file }, []);
  const r = await doing('explaining placement', () => m.Sandbox.explain(spec, clientOpts(ctx)));
  if (o.output === 'json') return ctx.out(toJson(r));
  const lines = [r.wouldPlaceOn ? `would place on: ${r.wouldPlaceOn}` : 'no runner admits this spec'];
  for (const v of r.verdicts) {
    lines.push(`  ${v.runnerId}: ${v.admitted === true ? 'admits' : v.admitted === false ? 'refuses' : 'unknown'}${v.note ? ` (${v.note})` : ''}`);
    for (const x of v.violations) lines.push(`  ${violationLine(x.field, x.description)}`);
  }
  ctx.out(lines.join('\n'));
}

export async function pauseSandbox(ctx: Ctx, ref: string, pause: boolean): Promise<void> {
  const m = await sdk();
  const id = idOf(ref);
  const sb = await doing(`${pause ? 'pausing' : 'resuming'} sandbox ${id}`, async () => {
    const s = await m.Sandbox.fromId(id, clientOpts(ctx));
    return pause ? s.pause() : s.resume();
  });
  ctx.out(`sandbox/${id} ${shortEnum(sb.status.state, 'STATE_')}`);
}

export interface SnapshotFlags {
  volume?: string;
  requestId?: string;
  wait?: boolean;
  output?: string;
}

export async function snapshotSandbox(ctx: Ctx, ref: string, o: SnapshotFlags): Promise<void> {
  const m = await sdk();
  const id = idOf(ref);
  const snap = await doing(`snapshotting sandbox ${id}`, async () => {
    const s = await m.Sandbox.fromId(id, clientOpts(ctx));
    return s.snapshot({ ...(o.volume ? { volume: o.volume } : {}), ...(o.requestId ? { requestId: o.requestId } : {}), wait: o.wait !== false });
  });
  const format = parseOutputFormat(o.output);
  if (format === 'json') return ctx.out(toJson(snap));
  if (format === 'yaml') return ctx.out(toYaml(snap));
  if (format === 'name') return ctx.out(`fileSystemSnapshot/${snap.fileSystemSnapshotId}`);
  ctx.out(renderTable(['id', 'state', 'volume', 'size'], [[snap.fileSystemSnapshotId, shortEnum(snap.state, 'SNAPSHOT_STATE_'), snap.sourceVolumeName, String(snap.sizeBytes)]]));
}
