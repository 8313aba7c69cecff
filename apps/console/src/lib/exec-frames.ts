import { ExecServerMessageSchema, type ExecServerMessage } from '@paddock/contracts';

/** Output channels of the exec WebSocket's binary frames (first byte). */
export const CHANNEL_STDOUT = 1;
export const CHANNEL_STDERR = 2;

export type ServerFrame = { kind: 'output'; channel: number; bytes: Uint8Array } | { kind: 'message'; message: ExecServerMessage } | { kind: 'invalid'; text: string };

/** One frame from the gateway: binary = channel byte + output; text = a JSON control message. */
export function decodeServerFrame(data: ArrayBuffer | string): ServerFrame {
  if (typeof data !== 'string') {
    const all = new Uint8Array(data);
    return { kind: 'output', channel: all[0] ?? CHANNEL_STDOUT, bytes: all.subarray(1) };
  }
  let json: unknown;
  try {
    json = JSON.parse(data);
  } catch {
    return { kind: 'invalid', text: data };
  }
  const msg = ExecServerMessageSchema.safeParse(json);
  return msg.success ? { kind: 'message', message: msg.data } : { kind: 'invalid', text: data };
}

/** The first frame: an interactive shell on a terminal of this size. */
export function initFrame(argv: string[], cols: number, rows: number): string {
  return JSON.stringify({ type: 'init', argv, tty: true, cols, rows });
}

export const resizeFrame = (cols: number, rows: number): string => JSON.stringify({ type: 'resize', cols, rows });
