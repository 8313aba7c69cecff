import type { IncomingMessage, ServerResponse } from 'node:http';
import { methodNotAllowed } from '../store/errors';
import type { Kubelet } from '../kubelet/kubelet';
import { formatLine, type LogLine } from '../kubelet/log-buffer';

/** `GET pods/<name>/log` with follow, previous, tailLines, sinceSeconds, sinceTime, timestamps, limitBytes. */
export function serveLogs(req: IncomingMessage, res: ServerResponse, kubelet: Kubelet, ns: string, pod: string, query: URLSearchParams): void {
  if (req.method !== 'GET') throw methodNotAllowed();
  const log = kubelet.logOf(ns, pod, query.get('container') ?? undefined, query.get('previous') === 'true');
  const num = (k: string): number | undefined => (query.get(k) !== null && query.get(k) !== '' ? Number(query.get(k)) : undefined);
  const timestamps = query.get('timestamps') === 'true';
  const tailLines = num('tailLines');
  const sinceSeconds = num('sinceSeconds');
  const sinceTime = query.get('sinceTime');
  const limitBytes = num('limitBytes');
  const lines = log.select({
    ...(tailLines !== undefined ? { tailLines } : {}),
    ...(sinceSeconds !== undefined ? { sinceSeconds } : {}),
    ...(sinceTime ? { sinceTime: new Date(sinceTime) } : {}),
  });
  res.writeHead(200, { 'Content-Type': 'text/plain', 'Transfer-Encoding': 'chunked' });
  res.flushHeaders();
  let sent = 0;
  const emit = (l: LogLine): boolean => {
    let text = formatLine(l, timestamps);
    if (limitBytes !== undefined) {
      if (sent >= limitBytes) return false;
      text = text.slice(0, limitBytes - sent);
    }
    sent += Buffer.byteLength(text);
    res.write(text);
    return limitBytes === undefined || sent < limitBytes;
  };
  for (const l of lines) if (!emit(l)) return void res.end();
  if (query.get('follow') !== 'true' || !log.running) return void res.end();
  const stop = log.follow(
    (l) => {
      if (!emit(l)) {
        stop();
        res.end();
      }
    },
    () => {
      stop();
      res.end();
    },
  );
  req.on('close', stop);
}
