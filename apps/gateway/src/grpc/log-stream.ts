import { create } from '@bufbuild/protobuf';
import { timestampDate, timestampFromDate } from '@bufbuild/protobuf/wkt';
import type { HandlerContext } from '@connectrpc/connect';
import { LogEntrySchema, type LogEntry, type StreamLogsRequest } from '@paddock/proto';
import type { Principal } from '../auth/token-authenticator';
import { invalid } from '../sandboxes/request-parsing';
import type { SandboxLifecycleService } from '../sandboxes/sandbox-lifecycle.service';
import type { SandboxOpsService } from '../sandboxes/sandbox-ops.service';

export interface LogStreamDeps {
  who(ctx: HandlerContext): Promise<Principal>;
  lifecycle: SandboxLifecycleService;
  ops: SandboxOpsService;
}

/**
 * StreamLogs over the same log reader as REST's NDJSON route. A sandbox has one log, so its
 * session id is the sandbox id; `next_log_offset` is the byte offset to resume from, which is
 * REST's `fromOffset`. Resuming needs `follow` and excludes tail, since and timestamps (the
 * resumed bytes must read exactly as the first stream's did).
 */
export async function* streamLogEntries(req: StreamLogsRequest, ctx: HandlerContext, deps: LogStreamDeps): AsyncGenerator<LogEntry> {
  const principal = await deps.who(ctx);
  const resuming = req.resumeLogSessionId !== '' || req.resumeLogOffset > 0n;
  if (resuming) refuseResumeConflicts(req);
  if (req.tailLines < 0) throw invalid('tailLines must be >= 0', [{ field: 'tailLines', rule: 'min', description: '>= 0' }]);
  if (resuming && req.resumeLogSessionId !== '' && req.resumeLogSessionId !== req.sandboxId) {
    yield terminal(req.sandboxId, req.resumeLogOffset, 'SESSION_NOT_FOUND', `log session ${req.resumeLogSessionId} is not this sandbox's (${req.sandboxId})`);
    return;
  }
  const lines = await deps.ops.openLogs(principal, req.sandboxId, {
    follow: req.follow,
    ...(req.container ? { container: req.container } : {}),
    ...(req.tailLines > 0 ? { tailLines: req.tailLines } : {}),
    ...(req.sinceTime ? { sinceTime: timestampDate(req.sinceTime).toISOString() } : {}),
    ...(resuming ? { fromOffset: Number(req.resumeLogOffset) } : {}),
  });
  const stop = (): void => void lines.return(undefined);
  ctx.signal.addEventListener('abort', stop, { once: true });
  let atLineStart = true;
  try {
    for await (const l of lines) {
      let data: Buffer = Buffer.from(l.data, 'base64');
      if (req.timestamps) ({ data, atLineStart } = prefixLines(data, `${l.time} `, atLineStart));
      yield create(LogEntrySchema, {
        data,
        timestamp: timestampFromDate(new Date(l.time)),
        logSessionId: req.sandboxId,
        nextLogOffset: BigInt(l.offset + Buffer.byteLength(l.data, 'base64')),
      });
    }
  } finally {
    ctx.signal.removeEventListener('abort', stop);
  }
}

function refuseResumeConflicts(req: StreamLogsRequest): void {
  const conflicts = [
    ...(!req.follow ? [{ field: 'follow', rule: 'required_for_resume', description: 'resuming needs follow = true' }] : []),
    ...(req.tailLines ? [{ field: 'tailLines', rule: 'mutually_exclusive', description: 'not with a resume offset' }] : []),
    ...(req.sinceTime ? [{ field: 'sinceTime', rule: 'mutually_exclusive', description: 'not with a resume offset' }] : []),
    ...(req.timestamps ? [{ field: 'timestamps', rule: 'mutually_exclusive', description: 'not with a resume offset' }] : []),
  ];
  if (conflicts.length) throw invalid(`a log resume ${conflicts.map((c) => c.description).join('; ')}`, conflicts);
}

function terminal(sessionId: string, offset: bigint, code: string, message: string): LogEntry {
  return create(LogEntrySchema, { logSessionId: sessionId, nextLogOffset: offset, error: { code, message } });
}

/** Prefixes every line that starts inside `data` (a chunk is not a line: carry the state over). */
function prefixLines(data: Buffer, prefix: string, atLineStart: boolean): { data: Buffer; atLineStart: boolean } {
  const parts: Buffer[] = [];
  let start = 0;
  let lineStart = atLineStart;
  while (start < data.length) {
    if (lineStart) parts.push(Buffer.from(prefix));
    const nl = data.indexOf(0x0a, start);
    const end = nl < 0 ? data.length : nl + 1;
    parts.push(data.subarray(start, end));
    lineStart = nl >= 0;
    start = end;
  }
  return { data: Buffer.concat(parts), atLineStart: lineStart };
}
