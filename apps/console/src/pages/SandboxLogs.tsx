import { useEffect, useId, useRef, useState } from 'react';
import { gateway } from '../api/gateway';
import { useSession } from '../auth/session';
import { ErrorNotice } from '../components/ui';
import { base64ToBytes } from '../lib/ndjson';

/** The main process's output; with Follow on, new output streams in as it is written. */
export function SandboxLogs(props: { sandboxId: string; ended: boolean }) {
  const s = useSession();
  const [follow, setFollow] = useState(true);
  const [text, setText] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [streaming, setStreaming] = useState(false);
  const pre = useRef<HTMLPreElement>(null);
  const followId = useId();

  useEffect(() => {
    const abort = new AbortController();
    const decoder = new TextDecoder();
    setText('');
    setError(null);
    setStreaming(true);
    void (async () => {
      try {
        for await (const line of gateway.logs(s.gateway, props.sandboxId, {
          follow: follow && !props.ended,
          signal: abort.signal,
        })) {
          if ('error' in line) {
            setError(new Error(`${line.error.code}: ${line.error.message}`));
            break;
          }
          const chunk = decoder.decode(base64ToBytes(line.data), { stream: true });
          setText((t) => t + chunk);
        }
      } catch (e) {
        if (!abort.signal.aborted) setError(e);
      } finally {
        if (!abort.signal.aborted) setStreaming(false);
      }
    })();
    return () => abort.abort();
  }, [s.gateway, props.sandboxId, follow, props.ended]);

  useEffect(() => {
    const el = pre.current;
    if (el && follow) el.scrollTop = el.scrollHeight;
  }, [text, follow]);

  return (
    <>
      <div className="row">
        <label className="check" htmlFor={followId}>
          <input
            id={followId}
            type="checkbox"
            checked={follow}
            disabled={props.ended}
            onChange={(e) => setFollow(e.target.checked)}
          />{' '}
          Follow
        </label>
        <span role="status" className="sub">
          {streaming ? (follow && !props.ended ? 'following…' : 'reading…') : 'end of log'}
        </span>
      </div>
      <ErrorNotice error={error} title="Logs unavailable" />
      <pre ref={pre} className="logs" tabIndex={0} aria-label="Sandbox logs" data-testid="logs">
        {text || (streaming ? '' : '(no output)')}
      </pre>
    </>
  );
}
