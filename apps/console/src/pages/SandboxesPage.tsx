import { useQuery } from '@tanstack/react-query';
import { SANDBOX_STATES } from '@paddock/contracts';
import { useId, useState } from 'react';
import { Link } from 'wouter';
import { gateway } from '../api/gateway';
import { useSession } from '../auth/session';
import { CardTable, ErrorNotice, StatusBadge } from '../components/ui';
import { enumLabel, shortId, splitList, timeAgo } from '../lib/format';

/** The organization's sandboxes, filtered by state, tags and runner; states update live (polled). */
export function SandboxesPage() {
  const s = useSession();
  const [state, setState] = useState('');
  const [tags, setTags] = useState('');
  const [runners, setRunners] = useState('');
  const [showTerminated, setShowTerminated] = useState(false);
  const ids = { state: useId(), tags: useId(), runners: useId(), terminated: useId() };
  const filters = { state, tags: splitList(tags), runnerIds: splitList(runners), showTerminated };
  const list = useQuery({
    queryKey: ['sandboxes', filters],
    queryFn: () => gateway.listSandboxes(s.gateway, filters),
    refetchInterval: 1500,
  });
  const sandboxes = list.data?.sandboxes ?? [];
  return (
    <section>
      <div className="title-row">
        <h1>Sandboxes</h1>
        <Link href="/sandboxes/new" className="button primary">
          New sandbox
        </Link>
      </div>
      <form className="filters" onSubmit={(e) => e.preventDefault()} aria-label="Filters">
        <label htmlFor={ids.state}>State</label>
        <select id={ids.state} value={state} onChange={(e) => setState(e.target.value)}>
          <option value="">any live</option>
          {SANDBOX_STATES.filter((x) => x !== 'STATE_UNSPECIFIED').map((x) => (
            <option key={x} value={x}>
              {enumLabel(x, 'STATE_').toLowerCase()}
            </option>
          ))}
        </select>
        <label htmlFor={ids.tags}>Tags (all of)</label>
        <input
          id={ids.tags}
          value={tags}
          placeholder="team-a, ci"
          onChange={(e) => setTags(e.target.value)}
        />
        <label htmlFor={ids.runners}>Runners (any of)</label>
        <input
          id={ids.runners}
          value={runners}
          placeholder="local"
          onChange={(e) => setRunners(e.target.value)}
        />
        <label className="check" htmlFor={ids.terminated}>
          <input
            id={ids.terminated}
            type="checkbox"
            checked={showTerminated}
            onChange={(e) => setShowTerminated(e.target.checked)}
          />{' '}
          Show ended
        </label>
      </form>
      <ErrorNotice error={list.error} />
      {list.data && sandboxes.length === 0 ? <p>No sandboxes match.</p> : null}
      {sandboxes.length > 0 ? (
        <CardTable caption="Sandboxes" columns={['Sandbox', 'State', 'Runner', 'Tags', 'Created']}>
          {sandboxes.map((sb) => (
            <tr key={sb.sandboxId} data-sandbox={sb.sandboxId}>
              <th scope="row">
                <Link href={`/sandboxes/${sb.sandboxId}`} title={sb.sandboxId}>
                  <code>{shortId(sb.sandboxId)}</code>
                </Link>
              </th>
              <td data-label="State">
                <StatusBadge value={enumLabel(sb.status.state, 'STATE_')} label="state" />{' '}
                {sb.status.stateReason ? (
                  <span className="sub">{sb.status.stateReason}</span>
                ) : null}
              </td>
              <td data-label="Runner">{sb.status.runnerId}</td>
              <td data-label="Tags">
                {Array.isArray(sb.spec.tags) ? (sb.spec.tags as string[]).join(', ') : ''}
              </td>
              <td data-label="Created">{timeAgo(sb.status.createTime)}</td>
            </tr>
          ))}
        </CardTable>
      ) : null}
    </section>
  );
}
