import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { isTerminalSandboxState, type GatewaySandbox } from '@paddock/contracts';
import { lazy, Suspense } from 'react';
import { Link, useLocation } from 'wouter';
import { gateway } from '../api/gateway';
import { useSession } from '../auth/session';

import {
  ConfirmButton,
  ErrorNotice,
  Facts,
  StatusBadge,
  Tabs,
  VerdictList,
} from '../components/ui';
import { enumLabel, timeAgo } from '../lib/format';
import { SandboxFiles } from './SandboxFiles';
import { SandboxLogs } from './SandboxLogs';

// xterm.js is the largest part of the console: loaded only when a terminal opens.
const SandboxTerminal = lazy(() =>
  import('../components/Terminal').then((m) => ({ default: m.SandboxTerminal })),
);

const TABS = [
  { id: 'overview', label: 'Overview' },
  { id: 'logs', label: 'Logs' },
  { id: 'files', label: 'Files' },
  { id: 'terminal', label: 'Terminal' },
];

export function SandboxPage(props: { id: string; tab: string }) {
  const s = useSession();
  const queries = useQueryClient();
  const [, navigate] = useLocation();
  const sandbox = useQuery({
    queryKey: ['sandbox', props.id],
    queryFn: () => gateway.getSandbox(s.gateway, props.id),
    // Live until it has ended; an ended sandbox never changes again.
    refetchInterval: (q) =>
      q.state.data && isTerminalSandboxState(q.state.data.status.state) ? false : 1000,
  });
  const stop = useMutation({
    mutationFn: () => gateway.stop(s.gateway, props.id),
    onSuccess: (r) => {
      if (r.sandbox) queries.setQueryData(['sandbox', props.id], r.sandbox);
      void queries.invalidateQueries({ queryKey: ['sandboxes'] });
    },
  });
  const sb = sandbox.data;
  const state = sb ? enumLabel(sb.status.state, 'STATE_') : '—';
  const ended = sb ? isTerminalSandboxState(sb.status.state) : false;
  return (
    <section>
      <p className="crumbs">
        <Link href="/sandboxes">Sandboxes</Link> /
      </p>
      <h1>
        Sandbox <code className="wrap">{props.id}</code>
      </h1>
      <ErrorNotice error={sandbox.error} />
      {sb ? (
        <>
          <div className="status-line" data-testid="sandbox-state">
            <StatusBadge value={state} label="state" />
            {sb.status.stateReason ? (
              <span>
                {' '}
                reason <strong>{sb.status.stateReason}</strong>
              </span>
            ) : null}
            {sb.status.exitCode !== undefined ? (
              <span> · exit code {sb.status.exitCode}</span>
            ) : null}
            {sb.status.message ? <span> · {sb.status.message}</span> : null}
            {ended ? null : (
              <ConfirmButton
                label="Stop"
                title="Stop this sandbox?"
                body={<p>Its processes are killed at once; its logs stay readable.</p>}
                confirmLabel="Stop sandbox"
                danger
                disabled={sb.status.state === 'STATE_TERMINATING' || stop.isPending}
                onConfirm={() => stop.mutate()}
              />
            )}
          </div>
          <ErrorNotice error={stop.error} title="Not stopped" />
          <Tabs
            tabs={TABS}
            current={props.tab}
            onSelect={(t) => navigate(`/sandboxes/${props.id}${t === 'overview' ? '' : `/${t}`}`)}
          >
            {props.tab === 'overview' ? <SandboxOverview sandbox={sb} /> : null}
            {props.tab === 'logs' ? <SandboxLogs sandboxId={props.id} ended={ended} /> : null}
            {props.tab === 'files' ? (
              ended ? (
                <p>The sandbox has ended: its files are gone.</p>
              ) : (
                <SandboxFiles sandboxId={props.id} />
              )
            ) : null}
            {props.tab === 'terminal' ? (
              sb.status.state === 'STATE_RUNNING' ? (
                <Suspense fallback={<p>Loading the terminal…</p>}>
                  <SandboxTerminal target={s.gateway} sandboxId={props.id} />
                </Suspense>
              ) : (
                <p>The terminal opens once the sandbox is running (now {state.toLowerCase()}).</p>
              )
            ) : null}
          </Tabs>
        </>
      ) : null}
    </section>
  );
}

function SandboxOverview(props: { sandbox: GatewaySandbox }) {
  const st = props.sandbox.status;
  const p = st.placement;
  const usage = st.resourceUsage;
  const eff = st.effectiveResources;
  const services = st.services ?? [];
  const declared = Array.isArray(props.sandbox.spec.services)
    ? (props.sandbox.spec.services as { port?: number; name?: string }[])
    : [];
  return (
    <>
      <Facts
        rows={[
          ['Runner', `${st.runnerId} (group ${st.runnerGroupId})`],
          ['Created', `${new Date(st.createTime).toLocaleString()} (${timeAgo(st.createTime)})`],
          ['Started', st.startTime ? new Date(st.startTime).toLocaleString() : '—'],
          ['Ended', st.endTime ? new Date(st.endTime).toLocaleString() : '—'],
          [
            'Resources (resolved)',
            eff
              ? `${eff.cpu} CPU, ${eff.memory} memory${eff.gpuCount ? `, ${eff.gpuCount} GPU` : ''}`
              : '—',
          ],
          [
            'Max lifetime',
            st.effectiveMaxLifetimeSeconds !== undefined
              ? `${st.effectiveMaxLifetimeSeconds} s`
              : '—',
          ],
          ['Runtime class', st.effectiveRuntimeClass ?? '—'],
          [
            'Resource usage',
            usage
              ? `${usage.cpuMillicores ?? 0}m CPU, ${usage.memoryMb ?? 0} MB memory`
              : 'not reported by this runner',
          ],
        ]}
      />
      <h2>Service URLs</h2>
      {services.length ? (
        <ul>
          {services.map((svc) => (
            <li key={svc.port}>
              {svc.name ?? 'port'} {svc.port}:{' '}
              {svc.url || svc.endpoint?.url ? (
                <a href={svc.url || svc.endpoint?.url}>{svc.url || svc.endpoint?.url}</a>
              ) : (
                'no URL yet'
              )}
            </li>
          ))}
        </ul>
      ) : declared.length ? (
        <p>
          Declares {declared.map((d) => `${d.name ?? 'port'} ${d.port}`).join(', ')}; this runner
          publishes no URL for them.
        </p>
      ) : (
        <p>This sandbox exposes no service.</p>
      )}
      <h2>Placement decision</h2>
      <p>
        Decided {timeAgo(p.decidedAt)} among {p.candidates.join(', ') || 'no candidate'}:{' '}
        {p.winner ? (
          <>
            placed on <strong>{p.winner}</strong>
          </>
        ) : (
          'not placed yet'
        )}
        .
      </p>
      <VerdictList verdicts={p.verdicts} tense="did" />
      {p.attempts.length ? (
        <>
          <h3>Attempts</h3>
          <ol>
            {p.attempts.map((a, i) => (
              <li key={i}>
                {a.runnerId}: {a.outcome}
                {a.code ? ` (${a.code})` : ''}
                {a.message ? ` — ${a.message}` : ''}
              </li>
            ))}
          </ol>
        </>
      ) : null}
      <h2>Spec</h2>
      <pre className="code">{JSON.stringify(props.sandbox.spec, null, 2)}</pre>
    </>
  );
}
