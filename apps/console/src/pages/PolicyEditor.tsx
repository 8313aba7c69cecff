import { useMutation, useQueryClient } from '@tanstack/react-query';
import type { ManagedRunner } from '@paddock/contracts';
import { useId, useMemo, useState } from 'react';
import { controlPlane } from '../api/control-plane';
import { ApiError } from '../api/http';
import { useSession } from '../auth/session';
import { DiffView } from '../components/DiffView';
import { ErrorNotice, ViolationList } from '../components/ui';
import { checkPolicyText, formatPolicy, type PolicyFormat } from '../lib/policy-text';

/** The version being edited: the policy as it was read, and the etag that read returned. */
interface BaseVersion {
  policy: unknown;
  etag: string;
}

/** The control plane's refusal of a policy write based on an older read. */
const isStaleEtag = (e: unknown): boolean =>
  e instanceof ApiError && e.code === 'failed_precondition' && /etag/.test(e.message);

interface Conflict {
  mine: string;
  current: ManagedRunner;
}

/**
 * Edits a runner's policy as YAML or JSON, validated as you type by `@paddock/policy` (the rules
 * the control plane applies). Saving sends the etag of the version being edited: if someone else
 * changed the policy since, the control plane refuses (failed_precondition) and the conflict
 * screen shows what changed, to reload or to reapply this edit on the current version. It never
 * retries on its own.
 */
export function PolicyEditor(props: { runner: ManagedRunner }) {
  const s = useSession();
  const queries = useQueryClient();
  const runnerId = props.runner.identity.runnerId;
  const [format, setFormat] = useState<PolicyFormat>('yaml');
  const [base, setBase] = useState<BaseVersion>({
    policy: props.runner.policy,
    etag: props.runner.etag,
  });
  const [text, setText] = useState(() => formatPolicy(props.runner.policy, 'yaml'));
  const [conflict, setConflict] = useState<Conflict | null>(null);
  const [saved, setSaved] = useState<string | null>(null);
  const check = useMemo(() => checkPolicyText(text), [text]);
  const editorId = useId();
  const problemsId = useId();
  const dirty = text !== formatPolicy(base.policy, format);

  const save = useMutation({
    mutationFn: (v: { policy: Record<string, unknown>; etag: string }) =>
      controlPlane.updateRunner(s.controlPlane, runnerId, 'policy', {
        policy: v.policy,
        etag: v.etag,
      }),
    onSuccess: (updated) => {
      queries.setQueryData(['runner', runnerId], updated);
      void queries.invalidateQueries({ queryKey: ['revisions', runnerId] });
      setBase({ policy: updated.policy, etag: updated.etag });
      setText(formatPolicy(updated.policy, format));
      setConflict(null);
      setSaved(updated.etag);
    },
    onError: async (e) => {
      if (isStaleEtag(e)) {
        const current = await controlPlane.getRunner(s.controlPlane, runnerId);
        queries.setQueryData(['runner', runnerId], current);
        setConflict({ mine: text, current });
      }
    },
  });

  const switchFormat = (next: PolicyFormat): void => {
    if (next === format) return;
    // Convert the text being edited when it parses; otherwise keep it as typed.
    if (check.ok) setText(formatPolicy(check.policy, next));
    setFormat(next);
  };

  if (conflict) {
    const theirs = formatPolicy(conflict.current.policy, format);
    return (
      <div className="conflict" role="region" aria-labelledby={`${editorId}-conflict`}>
        <h2 id={`${editorId}-conflict`}>Someone else changed this policy</h2>
        <p role="alert">
          Your edit was based on etag <code>{base.etag}</code>, but the runner's policy is now at
          etag <code>{conflict.current.etag}</code>. Nothing was saved.
        </p>
        <DiffView
          before={theirs}
          after={conflict.mine}
          beforeLabel={`current policy (etag ${conflict.current.etag})`}
          afterLabel="your edit"
        />
        <div className="actions">
          <button
            type="button"
            onClick={() => {
              setBase({ policy: conflict.current.policy, etag: conflict.current.etag });
              setText(theirs);
              setConflict(null);
              save.reset();
            }}
          >
            Reload (discard my edit)
          </button>
          <button
            type="button"
            className="primary"
            disabled={!checkPolicyText(conflict.mine).ok || save.isPending}
            onClick={() => {
              const mine = checkPolicyText(conflict.mine);
              if (!mine.ok) return;
              setBase({ policy: conflict.current.policy, etag: conflict.current.etag });
              setText(conflict.mine);
              save.mutate({ policy: mine.policy, etag: conflict.current.etag });
            }}
          >
            Reapply my edit on etag {conflict.current.etag}
          </button>
        </div>
      </div>
    );
  }

  return (
    <form
      className="policy-editor"
      onSubmit={(e) => {
        e.preventDefault();
        if (check.ok) save.mutate({ policy: check.policy, etag: base.etag });
      }}
    >
      <div className="editor-head">
        <p>
          Editing the version with etag <code data-testid="editing-etag">{base.etag}</code>
          {props.runner.usingDefaultPolicy
            ? ' (no policy set: the runner applies the platform default; saving sets this one)'
            : ''}
        </p>
        <fieldset className="segmented">
          <legend className="sr-only">Format</legend>
          {(['yaml', 'json'] as const).map((f) => (
            <label key={f}>
              <input
                type="radio"
                name={`${editorId}-format`}
                value={f}
                checked={format === f}
                onChange={() => switchFormat(f)}
              />
              {f.toUpperCase()}
            </label>
          ))}
        </fieldset>
      </div>
      <label htmlFor={editorId}>Policy document</label>
      <textarea
        id={editorId}
        className="code"
        value={text}
        spellCheck={false}
        rows={18}
        aria-invalid={!check.ok}
        aria-describedby={problemsId}
        onChange={(e) => {
          setText(e.target.value);
          setSaved(null);
        }}
      />
      <div id={problemsId} aria-live="polite">
        {check.ok ? (
          <p className="ok-line">✓ Valid policy{dirty ? ' (unsaved changes)' : ''}</p>
        ) : (
          <>
            <p className="bad-line">
              {check.violations.length} problem{check.violations.length === 1 ? '' : 's'}:
            </p>
            <ViolationList violations={check.violations} />
          </>
        )}
      </div>
      <div className="actions">
        <button type="submit" className="primary" disabled={!check.ok || !dirty || save.isPending}>
          {save.isPending ? 'Saving…' : 'Save policy'}
        </button>
        <button
          type="button"
          disabled={!dirty}
          onClick={() => setText(formatPolicy(base.policy, format))}
        >
          Revert
        </button>
        {saved ? (
          <span role="status" className="ok-line">
            Saved: new etag <code>{saved}</code>
          </span>
        ) : null}
      </div>
      {save.error && !isStaleEtag(save.error) ? (
        <ErrorNotice error={save.error} title="Not saved" />
      ) : null}
    </form>
  );
}
