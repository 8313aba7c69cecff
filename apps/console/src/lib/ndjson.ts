/**
 * Splits a byte stream into its NDJSON lines as they arrive (a line may span chunks; a chunk may
 * hold many lines). The last line needs no trailing newline.
 */
export async function* ndjsonLines(stream: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  let pending = '';
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      pending += decoder.decode(value, { stream: true });
      let nl = pending.indexOf('\n');
      while (nl >= 0) {
        const line = pending.slice(0, nl).trim();
        pending = pending.slice(nl + 1);
        if (line) yield line;
        nl = pending.indexOf('\n');
      }
    }
    pending += decoder.decode();
    if (pending.trim()) yield pending.trim();
  } finally {
    reader.releaseLock();
  }
}

/** Decodes base64 to bytes (the APIs carry bytes as base64 inside JSON). */
export function base64ToBytes(b64: string): Uint8Array {
  const bin = atob(b64);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}
