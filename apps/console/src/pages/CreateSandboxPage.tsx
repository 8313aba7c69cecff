import { useMutation, useQuery } from '@tanstack/react-query';
import { snakeToCamelDeep, type ExplainPlacementResponse } from '@paddock/contracts';
import { parsePolicyDocument } from '@paddock/policy/document';
import { useEffect, useId, useMemo, useState } from 'react';
import { Link, useLocation } from 'wouter';
import { controlPlane } from '../api/control-plane';
import { gateway } from '../api/gateway';
import { useSession } from '../auth/session';
import { ErrorNotice, Tabs, VerdictList } from '../components/ui';
import { EMPTY_FORM, specFromForm, type SandboxForm } from '../lib/spec-form';
import { stringify } from 'yaml';

type Mode = 'form' | 'spec';

/** A spec typed as YAML or JSON (snake_case accepted), read by the same hardened parser as policies. */
function specFromText(text: string): { ok: true; spec: unknown } | { ok: false; message: string } {
  const r = parsePolicyDocument(text);
  if (!r.ok) return { ok: false, message: r.violations.map((v) => v.description).join('; ') };
  return { ok: true, spec: snakeToCamelDeep(r.value) };
}

/**
 * Create a sandbox from a form or a spec. Before anything is created, `:explain` shows each
 * runner's verdict on the spec as it stands (refreshed as you type): which runner would take it,
 * and the constraint each other runner refuses it on.
 */
export function CreateSandboxPage() {
  const s = useSession();
  const [, navigate] = useLocation();
  const [mode, setMode] = useState<Mode>('form');
  const [form, setForm] = useState<SandboxForm>(EMPTY_FORM);
  const [text, setText] = useState(() => stringify(specFromForm(EMPTY_FORM)));
  const ids = {
    image: useId(),
    command: useId(),
    cpu: useId(),
    memory: useId(),
    tags: useId(),
    lifetime: useId(),
    spec: useId(),
  };
  const runners = useQuery({
    queryKey: ['runners'],
    queryFn: () => controlPlane.listRunners(s.controlPlane),
    enabled: s.isAdmin,
  });

  const parsed = useMemo(
    () =>
      mode === 'form' ? ({ ok: true, spec: specFromForm(form) } as const) : specFromText(text),
    [mode, form, text],
  );
  const specKey = parsed.ok ? JSON.stringify(parsed.spec) : null;
  // Explain the spec once typing pauses.
  const [debounced, setDebounced] = useState(specKey);
  useEffect(() => {
    const t = setTimeout(() => setDebounced(specKey), 300);
    return () => clearTimeout(t);
  }, [specKey]);
  const explain = useQuery({
    queryKey: ['explain', debounced],
    queryFn: () => gateway.explain(s.gateway, JSON.parse(debounced as string)),
    enabled: debounced !== null,
  });
  const create = useMutation({
    mutationFn: (spec: unknown) => gateway.create(s.gateway, spec),
    onSuccess: (sb) => navigate(`/sandboxes/${sb.sandboxId}`),
  });
  const set = (k: keyof SandboxForm) => (e: { target: { value: string } }) =>
    setForm({ ...form, [k]: e.target.value });

  return (
    <section>
      <p className="crumbs">
        <Link href="/sandboxes">Sandboxes</Link> /
      </p>
      <h1>New sandbox</h1>
      <div className="two-col">
        <div>
          <Tabs
            tabs={[
              { id: 'form', label: 'Form' },
              { id: 'spec', label: 'Spec (YAML/JSON)' },
            ]}
            current={mode}
            onSelect={(m) => {
              if (m === 'spec' && mode === 'form') setText(stringify(specFromForm(form)));
              setMode(m as Mode);
            }}
          >
            {mode === 'form' ? (
              <div className="form-grid">
                <label htmlFor={ids.image}>Image</label>
                <input
                  id={ids.image}
                  value={form.image}
                  placeholder="the runner's default image"
                  onChange={set('image')}
                />
                <label htmlFor={ids.command}>Command (shell)</label>
                <input
                  id={ids.command}
                  value={form.command}
                  placeholder="sleep infinity"
                  onChange={set('command')}
                />
                <label htmlFor={ids.cpu}>CPU</label>
                <input
                  id={ids.cpu}
                  value={form.cpu}
                  placeholder="policy default, e.g. 500m"
                  onChange={set('cpu')}
                />
                <label htmlFor={ids.memory}>Memory</label>
                <input
                  id={ids.memory}
                  value={form.memory}
                  placeholder="policy default, e.g. 512Mi"
                  onChange={set('memory')}
                />
                <label htmlFor={ids.tags}>Tags</label>
                <input
                  id={ids.tags}
                  value={form.tags}
                  placeholder="comma-separated"
                  onChange={set('tags')}
                />
                <label htmlFor={ids.lifetime}>Max lifetime (s)</label>
                <input
                  id={ids.lifetime}
                  inputMode="numeric"
                  value={form.maxLifetimeSeconds}
                  placeholder="policy default"
                  onChange={set('maxLifetimeSeconds')}
                />
                {runners.data?.managedRunners.length ? (
                  <fieldset>
                    <legend>Only on runners</legend>
                    {runners.data.managedRunners.map((r) => (
                      <label key={r.uid} className="check">
                        <input
                          type="checkbox"
                          checked={form.runnerIds.includes(r.identity.runnerId)}
                          onChange={(e) =>
                            setForm({
                              ...form,
                              runnerIds: e.target.checked
                                ? [...form.runnerIds, r.identity.runnerId]
                                : form.runnerIds.filter((x) => x !== r.identity.runnerId),
                            })
                          }
                        />{' '}
                        {r.identity.runnerId}
                      </label>
                    ))}
                  </fieldset>
                ) : null}
              </div>
            ) : (
              <>
                <label htmlFor={ids.spec}>Sandbox spec</label>
                <textarea
                  id={ids.spec}
                  className="code"
                  rows={16}
                  spellCheck={false}
                  value={text}
                  onChange={(e) => setText(e.target.value)}
                  aria-invalid={!parsed.ok}
                />
                {!parsed.ok ? (
                  <p className="bad-line" role="alert">
                    {parsed.message}
                  </p>
                ) : null}
              </>
            )}
          </Tabs>
          <div className="actions">
            <button
              type="button"
              className="primary"
              disabled={!parsed.ok || create.isPending || explain.data?.wouldPlaceOn === null}
              onClick={() => parsed.ok && create.mutate(parsed.spec)}
            >
              {create.isPending ? 'Creating…' : 'Create sandbox'}
            </button>
          </div>
          <ErrorNotice error={create.error} title="Not created" />
        </div>
        <aside aria-labelledby={`${ids.spec}-verdicts`} className="verdicts">
          <h2 id={`${ids.spec}-verdicts`}>Placement (explain)</h2>
          <ErrorNotice error={explain.error} title="Explain failed" />
          {explain.data ? (
            <Verdicts result={explain.data} />
          ) : (
            <p>{parsed.ok ? 'Explaining…' : 'Fix the spec to see verdicts.'}</p>
          )}
        </aside>
      </div>
    </section>
  );
}

function Verdicts(props: { result: ExplainPlacementResponse }) {
  const r = props.result;
  return (
    <div aria-live="polite">
      <p>
        {r.wouldPlaceOn ? (
          <>
            Would place on <strong data-testid="would-place-on">{r.wouldPlaceOn}</strong>.
          </>
        ) : (
          <strong>No runner admits this spec.</strong>
        )}
      </p>
      {r.verdicts.length === 0 ? <p>No runner is connected.</p> : null}
      <VerdictList verdicts={r.verdicts} tense="would" />
    </div>
  );
}
