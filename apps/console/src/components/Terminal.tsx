import { FitAddon } from '@xterm/addon-fit';
import { Terminal as XTerm } from '@xterm/xterm';
import '@xterm/xterm/css/xterm.css';
import { useEffect, useRef, useState } from 'react';
import type { ApiTarget } from '../api/http';
import { gateway } from '../api/gateway';
import { decodeServerFrame, initFrame, resizeFrame } from '../lib/exec-frames';

type Phase = 'connecting' | 'open' | 'ended';

/**
 * An interactive shell in the sandbox: xterm.js over the gateway's exec WebSocket with a TTY.
 * Keystrokes go up as binary stdin frames; the terminal's size follows its box (fit addon) and
 * every change is sent as a resize.
 */
export function SandboxTerminal(props: { target: ApiTarget; sandboxId: string }) {
  const box = useRef<HTMLDivElement>(null);
  const [phase, setPhase] = useState<Phase>('connecting');
  const [ending, setEnding] = useState<string | null>(null);
  const [session, setSession] = useState(0);

  useEffect(() => {
    const el = box.current;
    if (!el) return;
    setPhase('connecting');
    setEnding(null);
    const term = new XTerm({ cursorBlink: true, convertEol: false, fontSize: 14, screenReaderMode: false, theme: { background: '#0f172a' } });
    const fit = new FitAddon();
    term.loadAddon(fit);
    term.open(el);
    fit.fit();
    const ws = gateway.openExec(props.target, props.sandboxId);
    const encoder = new TextEncoder();
    let closedByUs = false;
    ws.onopen = () => {
      ws.send(initFrame(['/bin/sh', '-i'], term.cols, term.rows));
      setPhase('open');
      term.focus();
    };
    ws.onmessage = (ev: MessageEvent<ArrayBuffer | string>) => {
      const f = decodeServerFrame(ev.data);
      if (f.kind === 'output') term.write(f.bytes);
      else if (f.kind === 'message' && f.message.type === 'exit') setEnding(`shell exited with code ${f.message.exitCode}`);
      else if (f.kind === 'message' && f.message.type === 'error') setEnding(`${f.message.code}: ${f.message.message}`);
    };
    ws.onclose = (ev) => {
      setPhase('ended');
      if (!closedByUs) setEnding((prev) => prev ?? `connection closed (${ev.code})`);
      term.write('\r\n[session ended]\r\n');
    };
    const input = term.onData((d) => {
      if (ws.readyState === WebSocket.OPEN) ws.send(encoder.encode(d));
    });
    const resize = term.onResize(({ cols, rows }) => {
      if (ws.readyState === WebSocket.OPEN) ws.send(resizeFrame(cols, rows));
    });
    const observer = new ResizeObserver(() => fit.fit());
    observer.observe(el);
    return () => {
      closedByUs = true;
      observer.disconnect();
      input.dispose();
      resize.dispose();
      ws.close();
      term.dispose();
    };
  }, [props.target, props.sandboxId, session]);

  return (
    <div className="terminal">
      <div className="row">
        <span role="status">{phase === 'open' ? 'Connected: /bin/sh' : phase === 'connecting' ? 'Connecting…' : `Ended${ending ? `: ${ending}` : ''}`}</span>
        {phase === 'ended' ? (
          <button type="button" onClick={() => setSession((n) => n + 1)}>
            Reconnect
          </button>
        ) : null}
      </div>
      <div ref={box} className="xterm-box" aria-label="Terminal" data-testid="terminal" />
    </div>
  );
}
