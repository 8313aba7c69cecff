import { useQuery } from '@tanstack/react-query';
import { Link } from 'wouter';
import { controlPlane } from '../api/control-plane';
import { useSession } from '../auth/session';
import { CardTable, ErrorNotice, StatusBadge } from '../components/ui';
import { enumLabel, timeAgo } from '../lib/format';

/** Every managed runner of the organization, with install and connection status and rollout. */
export function RunnersPage() {
  const s = useSession();
  const runners = useQuery({
    queryKey: ['runners'],
    queryFn: () => controlPlane.listRunners(s.controlPlane),
    refetchInterval: 3000,
  });
  const list = runners.data?.managedRunners ?? [];
  return (
    <section>
      <h1>Runners</h1>
      <p className="lede">
        One managed runner per cluster, each with one policy. Refreshed every few seconds.
      </p>
      <ErrorNotice error={runners.error} />
      {runners.isPending ? <p>Loading…</p> : null}
      {runners.data && list.length === 0 ? (
        <p>
          No runners yet. Declare one with <code>cwic sandbox runner create</code>.
        </p>
      ) : null}
      {list.length > 0 ? (
        <CardTable
          caption="Managed runners"
          columns={[
            'Runner',
            'Zone / cluster',
            'Install',
            'Connection',
            'Revision',
            'Rollout',
            'Heartbeat',
          ]}
        >
          {list.map((r) => {
            const install = enumLabel(r.installStatus, 'RUNNER_INSTALL_STATUS_');
            const conn = enumLabel(r.connectionStatus, 'RUNNER_CONNECTION_STATUS_');
            return (
              <tr key={r.uid} data-runner={r.identity.runnerId}>
                <th scope="row">
                  <Link href={`/runners/${r.identity.runnerId}`}>{r.identity.runnerId}</Link>
                  {r.displayName ? <div className="sub">{r.displayName}</div> : null}
                </th>
                <td data-label="Zone / cluster">
                  {r.identity.zone} / {r.identity.clusterName || r.identity.clusterId}
                </td>
                <td data-label="Install">
                  <StatusBadge value={install} label="install" />
                </td>
                <td data-label="Connection">
                  <StatusBadge value={conn} label="connection" />
                </td>
                <td data-label="Revision">
                  {r.activeRevision}
                  {r.targetRevision !== r.activeRevision ? ` → ${r.targetRevision}` : ''}
                </td>
                <td data-label="Rollout">
                  {r.rolloutInProgress
                    ? 'rolling out'
                    : r.updateAvailable
                      ? 'update available'
                      : 'up to date'}
                </td>
                <td data-label="Heartbeat">{timeAgo(r.lastHeartbeatTime)}</td>
              </tr>
            );
          })}
        </CardTable>
      ) : null}
    </section>
  );
}
