import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { MaintenanceWindow, ManagedRunner, ReleaseChannel } from '@paddock/contracts';
import { useId, useState } from 'react';
import { controlPlane } from '../api/control-plane';
import { useSession } from '../auth/session';
import { ErrorNotice } from '../components/ui';

const CHANNELS: ReleaseChannel[] = ['RELEASE_CHANNEL_STABLE', 'RELEASE_CHANNEL_RAPID'];

/** Release channel and maintenance windows: each saved with its own update mask, nothing else touched. */
export function RunnerSettings(props: { runner: ManagedRunner }) {
  const s = useSession();
  const queries = useQueryClient();
  const r = props.runner;
  const id = r.identity.runnerId;
  const [channel, setChannel] = useState<ReleaseChannel>(r.spec.releaseChannel);
  const [windows, setWindows] = useState<MaintenanceWindow[]>(r.spec.maintenancePolicy.windows);
  const [done, setDone] = useState<string | null>(null);
  const channelId = useId();
  const save = useMutation({
    mutationFn: (v: {
      mask: string;
      what: string;
      body: Parameters<typeof controlPlane.updateRunner>[3];
    }) => controlPlane.updateRunner(s.controlPlane, id, v.mask, v.body),
    onSuccess: (updated, v) => {
      queries.setQueryData(['runner', id], updated);
      void queries.invalidateQueries({ queryKey: ['revisions', id] });
      setDone(`${v.what} saved.`);
    },
  });
  const releases = useQuery({
    queryKey: ['releases', channel],
    queryFn: () => controlPlane.releases(s.controlPlane, channel),
  });
  const newest = releases.data?.releases[0];
  return (
    <>
      <h2>Release channel</h2>
      <form
        className="row pairs"
        onSubmit={(e) => {
          e.preventDefault();
          save.mutate({
            mask: 'spec.release_channel',
            what: 'Release channel',
            body: { spec: { releaseChannel: channel } },
          });
        }}
      >
        <label htmlFor={channelId}>Channel</label>
        <select
          id={channelId}
          value={channel}
          onChange={(e) => setChannel(e.target.value as ReleaseChannel)}
        >
          {CHANNELS.map((c) => (
            <option key={c} value={c}>
              {c.replace('RELEASE_CHANNEL_', '').toLowerCase()}
            </option>
          ))}
        </select>
        <button type="submit" disabled={channel === r.spec.releaseChannel || save.isPending}>
          Save channel
        </button>
      </form>
      <p className="hint">
        {newest
          ? `Newest release on this channel: ${newest.version} (revision ${newest.revision}, image ${newest.image}).`
          : 'No release published on this channel yet.'}{' '}
        The runner is at revision {r.activeRevision}.
      </p>

      <h2>Maintenance windows (UTC)</h2>
      <p className="hint">
        Updates start only inside a window (none = any time). Exclusions:{' '}
        {r.spec.maintenancePolicy.exclusions.length || 'none'}.
      </p>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          save.mutate({
            mask: 'spec.maintenance_policy',
            what: 'Maintenance windows',
            body: {
              spec: {
                maintenancePolicy: { windows, exclusions: r.spec.maintenancePolicy.exclusions },
              },
            },
          });
        }}
      >
        {windows.map((w, i) => (
          <fieldset key={i} className="row">
            <legend className="sr-only">Window {i + 1}</legend>
            <label>
              Cron
              <input
                value={w.cron}
                placeholder="0 2 * * SAT"
                onChange={(e) =>
                  setWindows(windows.map((x, j) => (j === i ? { ...x, cron: e.target.value } : x)))
                }
              />
            </label>
            <label>
              Duration (s)
              <input
                type="number"
                min={60}
                max={604800}
                value={w.durationSeconds}
                onChange={(e) =>
                  setWindows(
                    windows.map((x, j) =>
                      j === i ? { ...x, durationSeconds: Number(e.target.value) } : x,
                    ),
                  )
                }
              />
            </label>
            <button
              type="button"
              onClick={() => setWindows(windows.filter((_, j) => j !== i))}
              aria-label={`Remove window ${i + 1}`}
            >
              Remove
            </button>
          </fieldset>
        ))}
        <div className="actions">
          <button
            type="button"
            onClick={() =>
              setWindows([...windows, { cron: '0 2 * * SAT', durationSeconds: 14400 }])
            }
          >
            Add window
          </button>
          <button type="submit" disabled={save.isPending}>
            Save windows
          </button>
        </div>
      </form>
      {done ? (
        <p role="status" className="ok-line">
          {done}
        </p>
      ) : null}
      <ErrorNotice error={save.error} />
    </>
  );
}
