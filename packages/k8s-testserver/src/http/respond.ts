import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError, badRequest, type StatusBody } from '../store/errors';

export function sendJson(res: ServerResponse, code: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(code, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

export function sendStatus(res: ServerResponse, status: StatusBody): void {
  sendJson(res, status.code, status);
}

export function sendError(res: ServerResponse, err: unknown): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  if (err instanceof ApiError) return sendStatus(res, err.status);
  const message = err instanceof Error ? err.message : String(err);
  sendStatus(res, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: `Internal error occurred: ${message}`, reason: 'InternalError', code: 500 });
}

const MAX_BODY = 8 * 1024 * 1024;

export async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY) throw badRequest('request entity too large');
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (e) {
    throw badRequest(`error decoding request body: ${e instanceof Error ? e.message : String(e)}`);
  }
}
