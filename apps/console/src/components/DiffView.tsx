import { diffLines } from 'diff';

/** A line diff of two texts: removed lines marked `-`, added `+` (screen readers hear the words). */
export function DiffView(props: { before: string; after: string; beforeLabel: string; afterLabel: string }) {
  const parts = diffLines(props.before, props.after);
  const changed = parts.some((p) => p.added || p.removed);
  return (
    <figure className="diff">
      <figcaption>
        <span className="diff-del">− {props.beforeLabel}</span> <span className="diff-add">+ {props.afterLabel}</span>
      </figcaption>
      {changed ? (
        <pre aria-label={`Differences between ${props.beforeLabel} and ${props.afterLabel}`}>
          {parts.flatMap((p, i) =>
            p.value
              .replace(/\n$/, '')
              .split('\n')
              .map((line, j) => (
                <span key={`${i}-${j}`} className={p.added ? 'diff-add' : p.removed ? 'diff-del' : 'diff-same'}>
                  {p.added ? <span className="sr-only">added </span> : p.removed ? <span className="sr-only">removed </span> : null}
                  {p.added ? '+ ' : p.removed ? '- ' : '  '}
                  {line}
                  {'\n'}
                </span>
              )),
          )}
        </pre>
      ) : (
        <p>No differences.</p>
      )}
    </figure>
  );
}
