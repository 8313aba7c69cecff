import type { ManagedRunner, ListManagedRunnersResponse, ListRunnerRevisionsResponse, RunnerRevision } from '@paddock/contracts';
import type { Ctx } from '../context';
import { CliError, EXIT, UsageError } from '../errors';
import { ApiError } from '../http';
import { isRecord, parseDocument, readInput } from '../input';
import { age, parseOutputFormat, renderTable, shortEnum, toJson, toYaml, type OutputFormat } from '../output';
import { changedPaths, planPatch, sameValue, type FieldDiff, type PlannedPatch } from '../patch';
import { loadCase } from '../lazy';
import { warmPoolLines } from './warm-pools';

const enc = encodeURIComponent;

export async function fetchRunner(ctx: Ctx, id: string, doing = `getting runner ${id}`): Promise<ManagedRunner> {
  return ctx.controlPlane().request<ManagedRunner>(doing, 'GET', `/v1/sandbox/managedRunners/${enc(id)}`);
}

async function listRunners(ctx: Ctx, filters: Record<string, string | undefined>): Promise<ManagedRunner[]> {
  const all: ManagedRunner[] = [];
  let pageToken = '';
  // Follows page tokens to the end: a user asking for "the runners" means all of them.
  for (let page = 0; page < 10_000; page++) {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(filters)) if (v) q.set(k, v);
    q.set('pageSize', '100');
    if (pageToken) q.set('pageToken', pageToken);
    const r = await ctx.controlPlane().request<ListManagedRunnersResponse>('listing runners', 'GET', `/v1/sandbox/managedRunners?${q.toString()}`);
    all.push(...r.managedRunners);
    if (!r.nextPageToken) break;
    pageToken = r.nextPageToken;
  }
  return all;
}

function printRunners(ctx: Ctx, runners: ManagedRunner[], format: OutputFormat, noHeaders = false): void {
  if (format === 'json') return ctx.out(toJson(runners));
  if (format === 'yaml') return ctx.out(toYaml(runners));
  if (format === 'name') return ctx.out(runners.map((r) => `runner/${r.identity.runnerId}`).join('\n') || '');
  const wide = format === 'wide';
  const headers = ['id', 'zone', 'cluster', 'install', 'connection', 'revision', 'age'];
  if (wide) headers.push('uid', 'channel', 'update', 'heartbeat', 'policy');
  const rows = runners.map((r) => {
    const revision = r.activeRevision === r.targetRevision ? r.activeRevision : `${r.activeRevision}→${r.targetRevision}`;
    const row = [
      r.identity.runnerId,
      r.identity.zone,
      r.identity.clusterName || r.identity.clusterId,
      shortEnum(r.installStatus, 'RUNNER_INSTALL_STATUS_'),
      shortEnum(r.connectionStatus, 'RUNNER_CONNECTION_STATUS_'),
      revision,
      age(r.createTime),
    ];
    if (wide) {
      row.push(
        r.uid,
        shortEnum(r.spec.releaseChannel, 'RELEASE_CHANNEL_'),
        r.updateAvailable ? 'available' : '-',
        age(r.lastHeartbeatTime),
        r.usingDefaultPolicy ? 'platform default' : (r.policy?.displayName ?? 'custom'),
      );
    }
    return row;
  });
  if (rows.length === 0 && !noHeaders) {
    ctx.io.stderr('No runners found.\n');
    return;
  }
  ctx.out(renderTable(headers, rows, noHeaders));
}

/** Reads `-f` and returns a camelCase object (the CLI and seeds speak snake_case YAML too). */
async function readDoc(ctx: Ctx, file: string): Promise<Record<string, unknown>> {
  const text = readInput(file, ctx.io.readStdin);
  const parsed = parseDocument(text, file === '-' ? 'stdin' : file);
  if (!isRecord(parsed)) throw new UsageError(`${file === '-' ? 'stdin' : file}: expected a mapping (YAML or JSON object)`);
  const { snakeToCamelDeep } = await loadCase();
  return snakeToCamelDeep(parsed) as Record<string, unknown>;
}

export const RUNNER_TEMPLATE = `# A managed runner (cwic sandbox runner create RUNNER-ID -f runner.yaml).
# snake_case or camelCase, YAML or JSON.
identity:
  zone: us-east-1                # the cluster's zone (cwic cluster get)
  cluster_name: CLUSTER-NAME     # or cluster_id: <uuid>
  # runner_group_id: default
spec:
  release_channel: RELEASE_CHANNEL_STABLE   # or RELEASE_CHANNEL_RAPID
  maintenance_policy:
    windows:
      - cron: "0 9 * * SAT"      # UTC; automatic updates start only inside a window
        duration_seconds: 14400
policy:
  display_name: default
  constraints:
    resources:
      default_cpu: "1"
      default_memory: "2Gi"
      max_cpu: "4"
      max_memory: "8Gi"
      require_limits: true
    lifecycle:
      default_lifetime_seconds: 3600
`;

/**
 * Polls the runner until its first heartbeat marks it CONNECTED (the seeds: "allow up to 30
 * seconds"), failing fast with the install error when the install FAILED.
 */
async function waitConnected(ctx: Ctx, runnerId: string, timeoutSeconds: number): Promise<ManagedRunner> {
  const deadline = Date.now() + timeoutSeconds * 1000;
  return ctx.withProgress(`waiting for runner ${runnerId} to connect`, async () => {
    for (;;) {
      const r = await fetchRunner(ctx, runnerId, `waiting for runner ${runnerId}`);
      if (r.connectionStatus === 'RUNNER_CONNECTION_STATUS_CONNECTED') return r;
      if (r.installStatus === 'RUNNER_INSTALL_STATUS_FAILED') {
        const hints = (r.installError?.remediationHints ?? []).map((h) => `\n  hint: ${h}`).join('');
        throw new CliError(`waiting for runner ${runnerId}: install failed: ${r.installError?.reason ?? 'unknown'}: ${r.installError?.message ?? ''}${hints}`, EXIT.refused);
      }
      if (Date.now() >= deadline) {
        throw new CliError(`waiting for runner ${runnerId}: deadline_exceeded: not connected after ${timeoutSeconds}s (install ${shortEnum(r.installStatus, 'RUNNER_INSTALL_STATUS_')}); see cwic sandbox runner describe ${runnerId}`, EXIT.refused);
      }
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  });
}

function parseTimeout(v: string | undefined): number {
  const n = Number(v ?? '300');
  if (!Number.isFinite(n) || n <= 0) throw new UsageError(`--timeout must be a positive number of seconds, got "${v}"`);
  return n;
}

export async function createRunner(ctx: Ctx, runnerId: string | undefined, opts: { file?: string; printTemplate?: boolean; requestId?: string; output?: string; wait?: boolean; timeout?: string }): Promise<void> {
  if (opts.printTemplate) return ctx.out(RUNNER_TEMPLATE);
  const format = opts.output ? parseOutputFormat(opts.output) : undefined;
  let doc: Record<string, unknown>;
  if (opts.file) {
    doc = await readDoc(ctx, opts.file);
  } else {
    if (!ctx.io.stdinIsTTY) throw new UsageError('no input: pass -f FILE (or -f - for stdin), or run interactively on a terminal');
    doc = await createWizard(ctx, runnerId);
  }
  const identity: Record<string, unknown> = isRecord(doc.identity) ? { ...doc.identity } : {};
  const fileRunnerId = typeof identity.runnerId === 'string' ? identity.runnerId : undefined;
  if (runnerId) {
    if (fileRunnerId && fileRunnerId !== runnerId) {
      throw new UsageError(`runner id "${runnerId}" does not match identity.runner_id "${fileRunnerId}" in the file`);
    }
    identity.runnerId = runnerId;
  }
  const effectiveId = runnerId ?? fileRunnerId;
  if (!effectiveId) throw new UsageError('a runner id is required: cwic sandbox runner create RUNNER-ID -f FILE');
  const requestId = opts.requestId ?? (typeof doc.requestId === 'string' ? doc.requestId : crypto.randomUUID());
  if (Buffer.byteLength(requestId) > 128) throw new UsageError('--request-id must be at most 128 bytes');
  const body = { ...doc, identity, requestId };
  const timeoutSeconds = parseTimeout(opts.timeout);
  let created = await ctx
    .controlPlane()
    .request<ManagedRunner>(`creating runner ${effectiveId}`, 'POST', `/v1/sandbox/managedRunners?requestId=${enc(requestId)}`, body);
  if (opts.wait) created = await waitConnected(ctx, created.identity.runnerId, timeoutSeconds);
  if (format) return printRunners(ctx, [created], format);
  if (opts.wait) return ctx.out(`runner/${created.identity.runnerId} created and connected`);
  ctx.out(`runner/${created.identity.runnerId} created (install ${shortEnum(created.installStatus, 'RUNNER_INSTALL_STATUS_')}); follow with: cwic sandbox runner describe ${created.identity.runnerId}`);
}

async function createWizard(ctx: Ctx, runnerId: string | undefined): Promise<Record<string, unknown>> {
  const id = runnerId ?? (await ctx.prompt('Runner id (unique in your organization): '));
  const clusters = await ctx.controlPlane().request<{ clusters: { id: string; name: string; zone: string }[] }>('listing clusters', 'GET', '/v1/clusters');
  if (clusters.clusters.length === 0) throw new CliError('no cluster is registered in your organization; connect one by running its controller', EXIT.refused);
  ctx.io.stderr(`${renderTable(['#', 'name', 'zone', 'id'], clusters.clusters.map((c, i) => [String(i + 1), c.name, c.zone, c.id]))}\n`);
  const pick = Number(await ctx.prompt('Cluster [1]: ', '1'));
  const cluster = clusters.clusters[pick - 1];
  if (!cluster) throw new UsageError(`no cluster #${pick}`);
  const channel = (await ctx.prompt('Release channel (STABLE/RAPID) [STABLE]: ', 'STABLE')).toUpperCase();
  const windowCron = await ctx.prompt('Maintenance window cron in UTC (empty = any time) []: ');
  const duration = windowCron ? Number(await ctx.prompt('Window duration in seconds [14400]: ', '14400')) : 0;
  const template =
    `# Review and save to submit; delete everything to abort.\n` +
    toYaml({
      identity: { runner_id: id, zone: cluster.zone, cluster_id: cluster.id },
      spec: {
        release_channel: `RELEASE_CHANNEL_${channel.replace(/^RELEASE_CHANNEL_/, '')}`,
        ...(windowCron ? { maintenance_policy: { windows: [{ cron: windowCron, duration_seconds: duration }] } } : {}),
      },
      policy: { display_name: 'default', constraints: { resources: { default_cpu: '1', default_memory: '2Gi', max_cpu: '4', max_memory: '8Gi' }, lifecycle: { default_lifetime_seconds: 3600 } } },
    });
  const edited = ctx.editText(template);
  if (!edited.replace(/#.*$/gm, '').trim()) throw new CliError('aborted: empty document', EXIT.usage);
  const parsed = parseDocument(edited, 'editor');
  if (!isRecord(parsed)) throw new UsageError('the edited document must be a mapping');
  if (!(await ctx.confirm(`Create runner ${id} on cluster ${cluster.name}?`))) throw new CliError('aborted', EXIT.usage);
  const { snakeToCamelDeep } = await loadCase();
  return snakeToCamelDeep(parsed) as Record<string, unknown>;
}

export async function getRunners(ctx: Ctx, runnerId: string | undefined, opts: { zone?: string; cluster?: string; connectionStatus?: string; output?: string; noHeaders?: boolean }): Promise<void> {
  const format = parseOutputFormat(opts.output);
  if (runnerId) return printRunners(ctx, [await fetchRunner(ctx, runnerId)], format, opts.noHeaders);
  const runners = await listRunners(ctx, { zone: opts.zone, clusterId: opts.cluster, connectionStatus: opts.connectionStatus });
  printRunners(ctx, runners, format, opts.noHeaders);
}

function describeText(r: ManagedRunner, revisions: RunnerRevision[]): string {
  const lines = [
    `Runner:          ${r.identity.runnerId}`,
    `UID:             ${r.uid}`,
    `Display name:    ${r.displayName || '-'}`,
    `Zone:            ${r.identity.zone}`,
    `Cluster:         ${r.identity.clusterName} (${r.identity.clusterId})`,
    `Runner group:    ${r.identity.runnerGroupId}`,
    `Install status:  ${r.installStatus}`,
    `Connection:      ${r.connectionStatus} (last heartbeat ${r.lastHeartbeatTime ?? 'never'})`,
    `Release channel: ${r.spec.releaseChannel}`,
    `Revisions:       active ${r.activeRevision}, target ${r.targetRevision}${r.rolloutInProgress ? ' (rollout in progress)' : ''}${r.updateAvailable ? ' — update available: cwic sandbox runner upgrade ' + r.identity.runnerId : ''}`,
    `Policy:          ${r.usingDefaultPolicy ? 'platform default (none configured)' : (r.policy?.displayName ?? '(unnamed)')}  etag ${r.etag}`,
    `Created:         ${r.createTime}   Updated: ${r.updateTime}`,
  ];
  const windows = r.spec.maintenancePolicy.windows ?? [];
  lines.push(`Maintenance:     ${windows.length ? windows.map((w) => `"${w.cron}" for ${w.durationSeconds}s`).join(', ') : 'any time'}`);
  for (const ex of r.spec.maintenancePolicy.exclusions ?? []) lines.push(`  excluded ${ex.startTime} → ${ex.endTime}${ex.reason ? ` (${ex.reason})` : ''}`);
  lines.push(...warmPoolLines(r));
  if (r.installError) {
    lines.push('Install error:', `  reason:   ${r.installError.reason}`, `  message:  ${r.installError.message}`, `  occurred: ${r.installError.occurredAt}`);
    for (const h of r.installError.remediationHints ?? []) lines.push(`  hint:     ${h}`);
    if (r.installError.diagnosticDetail) lines.push(`  detail:   ${r.installError.diagnosticDetail}`);
  }
  if (revisions.length) {
    lines.push('Recent history:');
    for (const rev of revisions.slice(-10)) {
      lines.push(`  #${rev.revision}  ${rev.time}  ${rev.actor ?? '-'}  ${rev.eventType}${rev.changes.length ? `  (${rev.changes.map((c) => c.field).join(', ')})` : ''}`);
    }
  }
  return lines.join('\n');
}

export async function describeRunner(ctx: Ctx, runnerId: string, opts: { output?: string }): Promise<void> {
  const r = await fetchRunner(ctx, runnerId, `describing runner ${runnerId}`);
  const revs = await ctx.controlPlane().request<ListRunnerRevisionsResponse>(`reading history of ${runnerId}`, 'GET', `/v1/sandbox/managedRunners/${enc(runnerId)}/revisions`).catch(() => ({ revisions: [] }));
  if (opts.output === 'json') return ctx.out(toJson({ runner: r, revisions: revs.revisions }));
  if (opts.output === 'yaml') return ctx.out(toYaml({ runner: r, revisions: revs.revisions }));
  ctx.out(describeText(r, revs.revisions));
}

/** The mutable settings, the policy and its etag, together (the seeds' safe edit path). */
export async function editTemplate(r: ManagedRunner): Promise<string> {
  const { camelToSnakeDeep } = await loadCase();
  const doc = camelToSnakeDeep({
    etag: r.etag,
    displayName: r.displayName,
    identity: { runnerId: r.identity.runnerId, zone: r.identity.zone, runnerGroupId: r.identity.runnerGroupId },
    spec: {
      releaseChannel: r.spec.releaseChannel,
      maintenancePolicy: r.spec.maintenancePolicy,
      overrides: r.spec.overrides,
      enforceResourceLimits: r.spec.enforceResourceLimits,
    },
    policy: r.policy,
  });
  return (
    `# Mutable settings of runner ${r.identity.runnerId}. Submit with:\n` +
    `#   cwic sandbox runner edit ${r.identity.runnerId} -f <this file>\n` +
    `# Only what this file names is updated; null clears; spec.overrides and policy are replaced whole.\n` +
    `# etag pins the policy revision this file was read from: if the policy changed since, the edit\n` +
    `# fails with failed_precondition instead of overwriting it.\n` +
    toYaml(doc)
  );
}

async function submitPatch(ctx: Ctx, runnerId: string, plan: PlannedPatch, opts: { etag?: string; current?: ManagedRunner; skipUnchanged: boolean }): Promise<ManagedRunner | undefined> {
  const fileRunner = plan.identityRefs.runnerId;
  if (typeof fileRunner === 'string' && fileRunner !== runnerId) {
    throw new UsageError(`the file is for runner "${fileRunner}", not "${runnerId}"`);
  }
  if (plan.legacyManagedSpec) {
    const flat = Object.keys(plan.legacyManagedSpec).map((k) => `managedSpec.${k}`);
    await ctx.controlPlane().request(`updating runner`, 'PATCH', `/v1beta2/sandbox/managed-runners/${enc(runnerId)}`, {
      runner: { id: runnerId, managedSpec: plan.legacyManagedSpec },
      updateMask: flat.join(','),
    });
  }
  let mask = plan.mask;
  if (mask.length === 0) return undefined;
  const body: Record<string, unknown> = { ...plan.body, identity: { ...(isRecord(plan.body.identity) ? plan.body.identity : {}), runnerId } };
  if (mask.includes('policy')) {
    // Which etag: --etag wins, then the file's own, then a fresh read right before submitting.
    const etag = opts.etag ?? plan.etag ?? (opts.current ?? (await fetchRunner(ctx, runnerId))).etag;
    body.etag = etag;
  }
  if (opts.skipUnchanged) {
    const current = opts.current ?? (await fetchRunner(ctx, runnerId));
    const changed = new Set(changedPaths(plan, current as unknown as Record<string, unknown>).map((d) => d.path));
    // A stale pinned etag must still reach the server so the concurrent edit is reported.
    if (mask.includes('policy') && body.etag !== current.etag) changed.add('policy');
    mask = mask.filter((p) => changed.has(p));
    if (mask.length === 0) return undefined;
  }
  return ctx
    .controlPlane()
    .request<ManagedRunner>('updating runner', 'PATCH', `/v1/sandbox/managedRunners/${enc(runnerId)}?updateMask=${enc(mask.join(','))}`, body);
}

export async function editRunner(ctx: Ctx, runnerId: string, opts: { file?: string; printTemplate?: boolean; etag?: string; output?: string }): Promise<void> {
  if (opts.printTemplate) return ctx.out(await editTemplate(await fetchRunner(ctx, runnerId)));
  let doc: Record<string, unknown>;
  let current: ManagedRunner | undefined;
  if (opts.file) {
    doc = await readDoc(ctx, opts.file);
  } else {
    if (!ctx.io.stdinIsTTY) throw new UsageError('no input: pass -f FILE (or -f -), or run interactively on a terminal');
    current = await fetchRunner(ctx, runnerId);
    const edited = ctx.editText(await editTemplate(current));
    const parsed = parseDocument(edited, 'editor');
    if (!isRecord(parsed)) throw new UsageError('the edited document must be a mapping');
    const { snakeToCamelDeep } = await loadCase();
    doc = snakeToCamelDeep(parsed) as Record<string, unknown>;
    if (doc.policy === undefined || doc.policy === null) {
      if (current.policy !== null) throw new UsageError('removing the policy is not allowed; use an explicit empty policy {} for the fully permissive posture');
    }
    if (isRecord(doc.spec) && doc.spec.releaseChannel == null) throw new UsageError('removing the release channel is not allowed');
  }
  const plan = planPatch(doc);
  // The wizard sends only what changed; a file sends what it names (minus no-op values).
  const updated = await submitPatch(ctx, runnerId, plan, { etag: opts.etag, current, skipUnchanged: true });
  if (!updated) {
    if (!plan.legacyManagedSpec) ctx.out(`runner/${runnerId}: no changes`);
    else ctx.out(`runner/${runnerId} updated`);
    return;
  }
  if (opts.output) return printRunners(ctx, [updated], parseOutputFormat(opts.output));
  ctx.out(`runner/${runnerId} updated`);
}

export async function upgradeRunner(ctx: Ctx, runnerId: string, opts: { output?: string }): Promise<void> {
  const r = await ctx
    .controlPlane()
    .request<ManagedRunner>(`upgrading runner ${runnerId}`, 'POST', `/v1/sandbox/managedRunners/${enc(runnerId)}:applyAvailableUpdate`, {});
  if (opts.output) return printRunners(ctx, [r], parseOutputFormat(opts.output));
  ctx.out(`runner/${runnerId}: update to revision ${r.targetRevision} accepted; the controller rolls it out (active revision ${r.activeRevision})`);
}

export async function deleteRunners(ctx: Ctx, ids: string[], opts: { yes?: boolean; allowMissing?: boolean }): Promise<void> {
  if (!opts.yes) {
    if (!ctx.io.stdinIsTTY) throw new UsageError('--yes required when not running interactively');
    const ok = await ctx.confirm(`Delete ${ids.length === 1 ? `runner ${ids[0]}` : `${ids.length} runners (${ids.join(', ')})`}? Every sandbox on ${ids.length === 1 ? 'it' : 'them'} stops and the policy is deleted with ${ids.length === 1 ? 'it' : 'them'}.`);
    if (!ok) throw new CliError('aborted', EXIT.usage);
  }
  let failures = 0;
  let worst: number = EXIT.ok;
  for (const id of ids) {
    try {
      await ctx.controlPlane().request(`deleting runner ${id}`, 'DELETE', `/v1/sandbox/managedRunners/${enc(id)}${opts.allowMissing ? '?allowMissing=true' : ''}`);
      ctx.out(`runner/${id} deletion requested`);
    } catch (e) {
      if (!(e instanceof CliError) || ids.length === 1) throw e;
      failures++;
      worst = Math.max(worst, e.exitCode);
      ctx.io.stderr(`Error: ${e.message}\n`);
    }
  }
  if (failures) throw new CliError(`${failures} of ${ids.length} deletions failed`, worst === EXIT.ok ? EXIT.refused : worst);
}

function foldRevisionDiff(revisions: RunnerRevision[], from: number, to: number): FieldDiff[] {
  const byField = new Map<string, FieldDiff>();
  for (const rev of revisions) {
    if (rev.revision <= from || rev.revision > to) continue;
    for (const c of rev.changes) {
      const prev = byField.get(c.field);
      byField.set(c.field, { path: c.field, before: prev ? prev.before : c.before, after: c.after });
    }
  }
  return [...byField.values()].filter((d) => !sameValue(d.before, d.after));
}

function renderDiff(diffs: FieldDiff[]): string {
  if (diffs.length === 0) return 'no differences';
  const show = (v: unknown): string => (v === undefined ? '<unset>' : JSON.stringify(v));
  return diffs.map((d) => `~ ${d.path}\n  - ${show(d.before)}\n  + ${show(d.after)}`).join('\n');
}

export async function history(ctx: Ctx, runnerId: string, opts: { output?: string; diff?: string[] }): Promise<void> {
  const r = await ctx.controlPlane().request<ListRunnerRevisionsResponse>(`reading history of ${runnerId}`, 'GET', `/v1/sandbox/managedRunners/${enc(runnerId)}/revisions`);
  if (opts.diff) {
    const [a, b] = opts.diff.map(Number);
    if (a === undefined || b === undefined || !Number.isInteger(a) || !Number.isInteger(b)) throw new UsageError('--diff takes two revision numbers: --diff 3 7');
    return ctx.out(renderDiff(foldRevisionDiff(r.revisions, Math.min(a, b), Math.max(a, b))));
  }
  if (opts.output === 'json') return ctx.out(toJson(r.revisions));
  if (opts.output === 'yaml') return ctx.out(toYaml(r.revisions));
  ctx.out(
    renderTable(
      ['revision', 'time', 'actor', 'event', 'changed', 'policy etag'],
      r.revisions.map((rev) => [String(rev.revision), rev.time, rev.actor ?? '-', rev.eventType, rev.changes.map((c) => c.field).join(',') || '-', rev.policyEtag]),
    ),
  );
}

/** Declarative management: the file is the desired runner; absent paths are not managed. */
async function planApply(ctx: Ctx, file: string, runnerIdArg?: string): Promise<{ runnerId: string; doc: Record<string, unknown>; current?: ManagedRunner; plan: PlannedPatch; diffs: FieldDiff[] }> {
  const doc = await readDoc(ctx, file);
  const identity = isRecord(doc.identity) ? doc.identity : {};
  const runnerId = runnerIdArg ?? (typeof identity.runnerId === 'string' ? identity.runnerId : undefined);
  if (!runnerId) throw new UsageError('the file must name identity.runner_id (or pass RUNNER-ID)');
  let current: ManagedRunner | undefined;
  try {
    current = await fetchRunner(ctx, runnerId);
  } catch (e) {
    if (!(e instanceof ApiError && e.body.code === 'not_found')) throw e;
  }
  const patchDoc: Record<string, unknown> = { ...doc };
  delete patchDoc.requestId;
  if (isRecord(patchDoc.identity)) {
    const { zone, runnerGroupId } = patchDoc.identity;
    patchDoc.identity = { runnerId, ...(zone !== undefined ? { zone } : {}), ...(runnerGroupId !== undefined ? { runnerGroupId } : {}) };
  }
  const plan = planPatch(patchDoc);
  const diffs = current ? changedPaths(plan, current) : [];
  return { runnerId, doc, current, plan, diffs };
}

export async function diffCmd(ctx: Ctx, opts: { file: string }, runnerIdArg?: string): Promise<void> {
  const { runnerId, current, diffs } = await planApply(ctx, opts.file, runnerIdArg);
  if (!current) return ctx.out(`+ runner/${runnerId} would be created`);
  ctx.out(diffs.length ? `runner/${runnerId}:\n${renderDiff(diffs)}` : `runner/${runnerId}: no changes`);
}

export async function applyCmd(ctx: Ctx, opts: { file: string; requestId?: string }, runnerIdArg?: string): Promise<void> {
  const { runnerId, doc, current, plan, diffs } = await planApply(ctx, opts.file, runnerIdArg);
  if (!current) {
    const identity = { ...(isRecord(doc.identity) ? doc.identity : {}), runnerId };
    const requestId = opts.requestId ?? crypto.randomUUID();
    await ctx.controlPlane().request(`creating runner ${runnerId}`, 'POST', `/v1/sandbox/managedRunners?requestId=${enc(requestId)}`, { ...doc, identity, requestId });
    return ctx.out(`runner/${runnerId} created`);
  }
  if (diffs.length === 0) return ctx.out(`runner/${runnerId}: no changes`);
  const mask = diffs.map((d) => d.path);
  const body: Record<string, unknown> = { ...plan.body, identity: { ...(isRecord(plan.body.identity) ? plan.body.identity : {}), runnerId } };
  // The file is the truth (GitOps): pin the etag of the read the diff was computed from, so an
  // edit that lands between our read and our write is reported instead of overwritten.
  if (mask.includes('policy')) body.etag = current.etag;
  await ctx.controlPlane().request('updating runner', 'PATCH', `/v1/sandbox/managedRunners/${enc(runnerId)}?updateMask=${enc(mask.join(','))}`, body);
  ctx.out(`runner/${runnerId} updated (${mask.join(', ')})`);
}

export { submitPatch, readDoc };
