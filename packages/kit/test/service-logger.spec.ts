import { createServiceLogger, currentRequestId, nestLoggerFor, prettyLine, requestIdFor, withRequestId } from '../src';

function collect(level: 'info' | 'debug' = 'info'): { lines: string[]; log: ReturnType<typeof createServiceLogger> } {
  const lines: string[] = [];
  return { lines, log: createServiceLogger({ service: 'gateway', level, sink: { write: (l) => lines.push(l) } }) };
}

describe('service logger', () => {
  it('writes one JSON object per line: level as a word, ISO time, the service, the message and the fields', () => {
    const { lines, log } = collect();
    log.info('sandbox created', { sandboxId: 'sb-1' });
    log.debug('not at info');
    expect(lines).toHaveLength(1);
    expect(lines[0]?.endsWith('\n')).toBe(true);
    const rec = JSON.parse(lines[0] as string) as Record<string, unknown>;
    expect(rec).toMatchObject({ level: 'info', service: 'gateway', msg: 'sandbox created', sandboxId: 'sb-1' });
    expect(new Date(rec.time as string).toISOString()).toBe(rec.time);
  });

  it('names the current request on every line written while serving it, across awaits', async () => {
    const { lines, log } = collect();
    await withRequestId('req-7', async () => {
      await new Promise((r) => setTimeout(r, 1));
      log.warn('slow runner');
      expect(currentRequestId()).toBe('req-7');
    });
    log.info('background');
    expect(lines.map((l) => (JSON.parse(l) as { requestId?: string }).requestId)).toEqual(['req-7', undefined]);
  });

  it('turns Nest calls (message, stack, context) into lines of the same logger', () => {
    const { lines, log } = collect();
    const nest = nestLoggerFor(log);
    nest.log('Nest application successfully started', 'NestApplication');
    nest.error('boom', 'Error: boom\n    at x (y.js:1:1)', 'ExceptionsHandler');
    expect(lines.map((l) => JSON.parse(l) as Record<string, unknown>)).toEqual([
      expect.objectContaining({ level: 'info', msg: 'Nest application successfully started', context: 'NestApplication' }),
      expect.objectContaining({ level: 'error', msg: 'boom', context: 'ExceptionsHandler', stack: 'Error: boom\n    at x (y.js:1:1)' }),
    ]);
  });

  it('pretty-prints a JSON line for a terminal, and passes other text through', () => {
    const text = prettyLine('{"level":"warn","time":"2026-01-02T03:04:05.678Z","service":"runner","msg":"Rejected runner config","error":"bad key"}');
    // eslint-disable-next-line no-control-regex
    expect(text.replace(/\x1b\[[0-9;]*m/g, '')).toBe('03:04:05.678 WARN  runner Rejected runner config error="bad key"\n');
    expect(prettyLine('plain text\n')).toBe('plain text\n');
  });
});

describe('request ids', () => {
  it("keeps a client's header-safe x-request-id and replaces anything else with a UUID", () => {
    expect(requestIdFor({ headers: { 'x-request-id': 'trace-42' } })).toBe('trace-42');
    expect(requestIdFor({ headers: { 'x-request-id': 'has space' } })).toMatch(/^[0-9a-f-]{36}$/);
    expect(requestIdFor({ headers: {} })).toMatch(/^[0-9a-f-]{36}$/);
  });
});
