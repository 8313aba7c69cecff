import { Duplex } from 'node:stream';
import { PaddockError, STREAM_CHUNK_BYTES } from '@paddock/contracts';
import type { RunnerClient, RunnerStream } from '../runners/runner-client';

/**
 * One TCP connection into a sandbox as a Node Duplex: bytes written go to the runner as `stdin`
 * frames, the runner's `stdout` frames are read out, `end()` half-closes towards the sandbox,
 * and the sandbox closing its side (`eof`) ends the readable side. Backpressure is the stream's
 * credit window in both directions: a slow reader stops asking for frames, which stops the runner.
 */
export class ServiceTunnel extends Duplex {
  private pumping = false;

  constructor(private readonly stream: RunnerStream) {
    super({ allowHalfOpen: true });
  }

  override _read(): void {
    if (this.pumping) return;
    this.pumping = true;
    void this.pump();
  }

  private async pump(): Promise<void> {
    try {
      for (;;) {
        const f = await this.stream.next();
        if (!f || f.header.kind === 'eof') {
          this.push(null);
          return;
        }
        if (f.header.kind === 'error') {
          const e = f.header.error;
          this.destroy(e ? PaddockError.fromBody(e) : new Error('the runner ended the connection'));
          return;
        }
        if (f.header.kind === 'stdout' && !this.push(Buffer.from(f.payload))) {
          // Resumed by the next _read().
          this.pumping = false;
          return;
        }
      }
    } catch (e) {
      this.destroy(e instanceof Error ? e : new Error(String(e)));
    }
  }

  override _write(chunk: Buffer, _enc: BufferEncoding, done: (e?: Error | null) => void): void {
    void (async () => {
      for (let off = 0; off < chunk.length; off += STREAM_CHUNK_BYTES) await this.stream.sendData('stdin', chunk.subarray(off, off + STREAM_CHUNK_BYTES));
    })().then(() => done(), (e: unknown) => done(e instanceof Error ? e : new Error(String(e))));
  }

  override _final(done: (e?: Error | null) => void): void {
    this.stream.control({ kind: 'stdinEof' });
    done();
  }

  override _destroy(err: Error | null, done: (e?: Error | null) => void): void {
    this.stream.control({ kind: 'cancel' });
    this.stream.close();
    done(err);
  }

  /** net.Socket methods Node's HTTP client calls on its connection; a relayed stream has no such knobs. */
  setNoDelay(): this {
    return this;
  }
  setKeepAlive(): this {
    return this;
  }
  setTimeout(): this {
    return this;
  }
  ref(): this {
    return this;
  }
  unref(): this {
    return this;
  }
}

/** Opens a connection to `port` of a sandbox through its runner. */
export async function openServiceTunnel(runners: RunnerClient, target: { runnerId: string; sandboxId: string; organizationId: string; port: number }): Promise<ServiceTunnel> {
  const { stream } = await runners.openStream(target.runnerId, 'portForward', { sandboxId: target.sandboxId, organizationId: target.organizationId, port: target.port });
  return new ServiceTunnel(stream);
}
