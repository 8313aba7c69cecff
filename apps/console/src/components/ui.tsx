import { useEffect, useId, useRef, useState, type ReactNode } from 'react';
import type { PlacementVerdictView } from '@paddock/contracts';
import { ApiError } from '../api/http';

/** A status pill: `tone` picks the colour, the text says it (colour is never the only signal). */
export function Badge(props: { tone: 'ok' | 'warn' | 'bad' | 'info' | 'muted'; children: ReactNode; label?: string }) {
  return (
    <span className={`badge badge-${props.tone}`} {...(props.label ? { 'aria-label': props.label } : {})}>
      {props.children}
    </span>
  );
}

const GOOD = new Set(['READY', 'CONNECTED', 'RUNNING', 'COMPLETED']);
const BAD = new Set(['FAILED', 'DISCONNECTED', 'DELETING']);
export function StatusBadge(props: { value: string; label?: string }) {
  const tone = GOOD.has(props.value) ? 'ok' : BAD.has(props.value) ? 'bad' : props.value === '—' ? 'muted' : 'warn';
  return (
    <Badge tone={tone} {...(props.label ? { label: `${props.label}: ${props.value}` } : {})}>
      {props.value}
    </Badge>
  );
}

/** An API refusal in words: its code, message, reason and every field violation. */
export function ErrorNotice(props: { error: unknown; title?: string }) {
  const e = props.error;
  if (!e) return null;
  const api = e instanceof ApiError ? e : null;
  return (
    <div className="notice notice-bad" role="alert">
      <strong>{props.title ?? (api?.forbidden ? 'Not allowed' : 'Request failed')}</strong>
      <p>
        {api ? <code>{api.code}</code> : null} {e instanceof Error ? e.message : typeof e === 'string' ? e : JSON.stringify(e)}
        {api?.reason ? (
          <>
            {' '}
            (<code>{api.reason}</code>)
          </>
        ) : null}
      </p>
      {api?.forbidden ? <p>Your token's role does not allow this. Ask an organization admin.</p> : null}
      {api && api.violations.length > 0 ? <ViolationList violations={api.violations} /> : null}
    </div>
  );
}

export function ViolationList(props: { violations: readonly { field: string; rule: string; description: string }[]; id?: string }) {
  return (
    <ul className="violations" {...(props.id ? { id: props.id } : {})}>
      {props.violations.map((v, i) => (
        <li key={`${v.field}-${v.rule}-${i}`}>
          <code>{v.field}</code> <span className="rule">{v.rule}</span>: {v.description}
        </li>
      ))}
    </ul>
  );
}

/**
 * A destructive action behind a confirmation dialog. With `confirmText`, the user must type it
 * (the runner id before a delete).
 */
export function ConfirmButton(props: {
  label: string;
  /** What a screen reader hears when the visible label alone is ambiguous (one per table row). */
  accessibleLabel?: string;
  title: string;
  body: ReactNode;
  confirmLabel: string;
  confirmText?: string;
  danger?: boolean;
  disabled?: boolean;
  onConfirm(): void;
}) {
  const [open, setOpen] = useState(false);
  const [typed, setTyped] = useState('');
  const dialog = useRef<HTMLDialogElement>(null);
  const inputId = useId();
  const titleId = useId();
  useEffect(() => {
    const d = dialog.current;
    if (!d) return;
    if (open && !d.open) d.showModal();
    if (!open && d.open) d.close();
  }, [open]);
  const ready = props.confirmText === undefined || typed === props.confirmText;
  return (
    <>
      <button
        type="button"
        className={props.danger ? 'danger' : ''}
        disabled={props.disabled}
        onClick={() => setOpen(true)}
        {...(props.accessibleLabel ? { 'aria-label': props.accessibleLabel } : {})}
      >
        {props.label}
      </button>
      <dialog ref={dialog} aria-labelledby={titleId} onClose={() => setOpen(false)}>
        <form
          method="dialog"
          onSubmit={(e) => {
            e.preventDefault();
            if (!ready) return;
            setOpen(false);
            setTyped('');
            props.onConfirm();
          }}
        >
          <h2 id={titleId}>{props.title}</h2>
          <div>{props.body}</div>
          {props.confirmText !== undefined ? (
            <p>
              <label htmlFor={inputId}>
                Type <code>{props.confirmText}</code> to confirm
              </label>
              <input id={inputId} value={typed} onChange={(e) => setTyped(e.target.value)} autoComplete="off" />
            </p>
          ) : null}
          <div className="actions">
            <button type="button" onClick={() => setOpen(false)}>
              Cancel
            </button>
            <button type="submit" className={props.danger ? 'danger' : 'primary'} disabled={!ready}>
              {props.confirmLabel}
            </button>
          </div>
        </form>
      </dialog>
    </>
  );
}

/** Label + value rows. */
export function Facts(props: { rows: [string, ReactNode][] }) {
  return (
    <dl className="facts">
      {props.rows.map(([k, v]) => (
        <div key={k}>
          <dt>{k}</dt>
          <dd>{v}</dd>
        </div>
      ))}
    </dl>
  );
}

/** Keyboard-operable tabs (arrow keys move between them), each panel labelled by its tab. */
export function Tabs(props: { tabs: { id: string; label: string }[]; current: string; onSelect(id: string): void; children: ReactNode }) {
  const base = useId();
  const refs = useRef<(HTMLButtonElement | null)[]>([]);
  const index = props.tabs.findIndex((t) => t.id === props.current);
  return (
    <div className="tabs">
      <div role="tablist" aria-label="Sections">
        {props.tabs.map((t, i) => (
          <button
            key={t.id}
            ref={(el) => {
              refs.current[i] = el;
            }}
            role="tab"
            type="button"
            id={`${base}-tab-${t.id}`}
            aria-selected={t.id === props.current}
            aria-controls={`${base}-panel`}
            tabIndex={t.id === props.current ? 0 : -1}
            onClick={() => props.onSelect(t.id)}
            onKeyDown={(e) => {
              const step = e.key === 'ArrowRight' ? 1 : e.key === 'ArrowLeft' ? -1 : 0;
              if (!step) return;
              const next = props.tabs[(index + step + props.tabs.length) % props.tabs.length];
              if (!next) return;
              props.onSelect(next.id);
              refs.current[props.tabs.indexOf(next)]?.focus();
            }}
          >
            {t.label}
          </button>
        ))}
      </div>
      <div role="tabpanel" id={`${base}-panel`} aria-labelledby={`${base}-tab-${props.current}`} className="tabpanel">
        {props.children}
      </div>
    </div>
  );
}

/**
 * A table of rows that becomes one card per row on narrow screens (each cell's `data-label`
 * names its column there). `columns` are the header cells; a `null` label is a visually empty one.
 */
export function CardTable(props: { caption: string; columns: (string | null)[]; children: ReactNode }) {
  return (
    <div className="table-wrap">
      <table className="cards">
        <caption className="sr-only">{props.caption}</caption>
        <thead>
          <tr>
            {props.columns.map((c, i) => (
              <th scope="col" key={c ?? `col-${i}`}>
                {c ?? <span className="sr-only">Actions</span>}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>{props.children}</tbody>
      </table>
    </div>
  );
}

/** Each runner's verdict on a spec: admitted or refused, with the constraints that refuse it. */
export function VerdictList(props: { verdicts: PlacementVerdictView[]; tense: 'would' | 'did' }) {
  const words = props.tense === 'would' ? ['admits', 'refuses'] : ['admitted', 'refused'];
  return (
    <ul className="verdict-list">
      {props.verdicts.map((v) => (
        <li key={v.runnerId} data-runner={v.runnerId}>
          <strong>{v.runnerId}</strong>{' '}
          {v.admitted === true ? <Badge tone="ok">{words[0]}</Badge> : v.admitted === false ? <Badge tone="bad">{words[1]}</Badge> : <Badge tone="warn">unknown</Badge>}
          {v.note ? <div className="sub">{v.note}</div> : null}
          {v.violations.length ? <ViolationList violations={v.violations} /> : null}
        </li>
      ))}
    </ul>
  );
}
