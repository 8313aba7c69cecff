import { useQuery } from '@tanstack/react-query';
import { useId, useState } from 'react';
import { controlPlane } from '../api/control-plane';
import { useSession } from '../auth/session';
import { ErrorNotice } from '../components/ui';
import { showValue, timeAgo } from '../lib/format';
import { diffRevisions } from '../lib/revision-diff';

/** The runner's revisions from its event log, and what changed between any two of them. */
export function RunnerHistory(props: { runnerId: string }) {
  const s = useSession();
  const revisions = useQuery({
    queryKey: ['revisions', props.runnerId],
    queryFn: () => controlPlane.revisions(s.controlPlane, props.runnerId),
  });
  const list = revisions.data?.revisions ?? [];
  const newest = list.reduce((m, r) => Math.max(m, r.revision), 0);
  const [from, setFrom] = useState<number | null>(null);
  const [to, setTo] = useState<number | null>(null);
  const fromId = useId();
  const toId = useId();
  const a = from ?? Math.max(0, newest - 1);
  const b = to ?? newest;
  const changes = diffRevisions(list, a, b);
  return (
    <>
      <ErrorNotice error={revisions.error} />
      <h2>Compare revisions</h2>
      <div className="row pairs">
        <label htmlFor={fromId}>From</label>
        <select id={fromId} value={a} onChange={(e) => setFrom(Number(e.target.value))}>
          <option value={0}>0 (before creation)</option>
          {list.map((r) => (
            <option key={r.revision} value={r.revision}>
              {r.revision}
            </option>
          ))}
        </select>
        <label htmlFor={toId}>To</label>
        <select id={toId} value={b} onChange={(e) => setTo(Number(e.target.value))}>
          {list.map((r) => (
            <option key={r.revision} value={r.revision}>
              {r.revision}
            </option>
          ))}
        </select>
      </div>
      {changes.length === 0 ? (
        <p>
          No field differs between revisions {a} and {b}.
        </p>
      ) : (
        <div className="table-wrap">
          <table aria-label={`Changes from revision ${a} to ${b}`}>
            <thead>
              <tr>
                <th scope="col">Field</th>
                <th scope="col">Revision {a}</th>
                <th scope="col">Revision {b}</th>
              </tr>
            </thead>
            <tbody>
              {changes.map((c) => (
                <tr key={c.field}>
                  <th scope="row">
                    <code>{c.field}</code>
                  </th>
                  <td className="diff-del">
                    <code>{showValue(c.before)}</code>
                  </td>
                  <td className="diff-add">
                    <code>{showValue(c.after)}</code>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <h2>Revisions</h2>
      <ul className="history" aria-label="Revisions, newest first">
        {[...list].sort((x, y) => y.revision - x.revision).map((r) => (
          <li key={r.revision}>
            <strong>
              {r.revision}. {r.eventType}
            </strong>{' '}
            <span className="sub">
              by {r.actor ?? 'system'}, {timeAgo(r.time)} · policy etag <code>{r.policyEtag}</code>
            </span>
            {r.changes.length ? (
              <div className="sub">changed {r.changes.map((c) => c.field).join(', ')}</div>
            ) : null}
          </li>
        ))}
      </ul>
    </>
  );
}
