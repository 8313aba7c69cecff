import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { ManagedRunner } from '@paddock/contracts';
import { Link, useLocation } from 'wouter';
import { controlPlane } from '../api/control-plane';
import { useSession } from '../auth/session';
import { ConfirmButton, ErrorNotice, Facts, StatusBadge, Tabs } from '../components/ui';
import { enumLabel, timeAgo } from '../lib/format';
import { PolicyEditor } from './PolicyEditor';
import { RunnerHistory } from './RunnerHistory';
import { RunnerSettings } from './RunnerSettings';

const TABS = [
  { id: 'overview', label: 'Overview' },
  { id: 'policy', label: 'Policy' },
  { id: 'history', label: 'History' },
  { id: 'settings', label: 'Settings' },
];

export function RunnerPage(props: { id: string; tab: string }) {
  const s = useSession();
  const [, navigate] = useLocation();
  const runner = useQuery({
    queryKey: ['runner', props.id],
    queryFn: () => controlPlane.getRunner(s.controlPlane, props.id),
    refetchInterval: 3000,
  });
  const r = runner.data;
  return (
    <section>
      <p className="crumbs">
        <Link href="/runners">Runners</Link> /
      </p>
      <h1>
        Runner <code>{props.id}</code>
      </h1>
      <ErrorNotice error={runner.error} />
      {r ? (
        <>
          <p className="status-line">
            <StatusBadge
              value={enumLabel(r.installStatus, 'RUNNER_INSTALL_STATUS_')}
              label="install"
            />{' '}
            <StatusBadge
              value={enumLabel(r.connectionStatus, 'RUNNER_CONNECTION_STATUS_')}
              label="connection"
            />{' '}
            {r.displayName}
          </p>
          <Tabs
            tabs={TABS}
            current={props.tab}
            onSelect={(t) => navigate(`/runners/${props.id}${t === 'overview' ? '' : `/${t}`}`)}
          >
            {props.tab === 'policy' ? <PolicyEditor runner={r} /> : null}
            {props.tab === 'history' ? <RunnerHistory runnerId={props.id} /> : null}
            {props.tab === 'settings' ? <RunnerSettings runner={r} /> : null}
            {props.tab === 'overview' ? <RunnerOverview runner={r} /> : null}
          </Tabs>
        </>
      ) : null}
    </section>
  );
}

function RunnerOverview(props: { runner: ManagedRunner }) {
  const r = props.runner;
  const s = useSession();
  const queries = useQueryClient();
  const [, navigate] = useLocation();
  const upgrade = useMutation({
    mutationFn: () => controlPlane.applyUpdate(s.controlPlane, r.identity.runnerId),
    onSuccess: (updated) => queries.setQueryData(['runner', r.identity.runnerId], updated),
  });
  const remove = useMutation({
    mutationFn: () => controlPlane.deleteRunner(s.controlPlane, r.identity.runnerId),
    onSuccess: async () => {
      await queries.invalidateQueries({ queryKey: ['runners'] });
      navigate('/runners');
    },
  });
  return (
    <>
      {r.installError ? (
        <div className="notice notice-bad" role="alert">
          <strong>Install failed: {r.installError.reason}</strong>
          <p>{r.installError.message}</p>
          {r.installError.diagnosticDetail ? <pre>{r.installError.diagnosticDetail}</pre> : null}
          {r.installError.remediationHints.length ? (
            <>
              <p>What to do:</p>
              <ul>
                {r.installError.remediationHints.map((h) => (
                  <li key={h}>{h}</li>
                ))}
              </ul>
            </>
          ) : null}
        </div>
      ) : null}
      <Facts
        rows={[
          ['Zone', r.identity.zone],
          ['Cluster', `${r.identity.clusterName} (${r.identity.clusterId})`],
          ['Runner group', r.identity.runnerGroupId],
          ['Last heartbeat', timeAgo(r.lastHeartbeatTime)],
          ['Revision', `active ${r.activeRevision}, target ${r.targetRevision}`],
          ['Rollout', r.rolloutInProgress ? 'in progress' : 'idle'],
          ['Release channel', enumLabel(r.spec.releaseChannel, 'RELEASE_CHANNEL_')],
          ['Update', r.updateAvailable ? 'a newer release is available' : 'up to date'],
          ['Policy', r.usingDefaultPolicy ? 'platform default' : `configured (etag ${r.etag})`],
          ['Image', r.deploymentSpec.image],
          ['Created', new Date(r.createTime).toLocaleString()],
        ]}
      />
      <div className="actions">
        <button
          type="button"
          className="primary"
          disabled={!r.updateAvailable || upgrade.isPending}
          onClick={() => upgrade.mutate()}
        >
          {upgrade.isPending ? 'Upgrading…' : 'Upgrade now'}
        </button>
        {!r.updateAvailable ? (
          <span className="hint">No newer release on this channel.</span>
        ) : null}
        <ConfirmButton
          label="Delete runner"
          title={`Delete runner ${r.identity.runnerId}?`}
          body={
            <p>
              This tears down its deployment, stops every sandbox on it and deletes its policy. It
              cannot be undone.
            </p>
          }
          confirmLabel="Delete"
          confirmText={r.identity.runnerId}
          danger
          onConfirm={() => remove.mutate()}
        />
      </div>
      <ErrorNotice error={upgrade.error ?? remove.error} />
    </>
  );
}
