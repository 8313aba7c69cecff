/** Container output kept the way the kubelet's log files do: whole lines with their timestamps. */

export interface LogLine {
  at: Date;
  text: string;
}

export interface LogQuery {
  tailLines?: number;
  sinceSeconds?: number;
  sinceTime?: Date;
  timestamps?: boolean;
  limitBytes?: number;
}

/** RFC 3339 with nanoseconds, as `kubectl logs --timestamps` prints. */
export const rfc3339Nano = (d: Date): string => d.toISOString().replace(/\.(\d{3})Z$/, '.$1000000Z');

export const formatLine = (l: LogLine, timestamps: boolean): string => (timestamps ? `${rfc3339Nano(l.at)} ${l.text}` : l.text);

export class LogBuffer {
  private readonly lines: LogLine[] = [];
  private bytes = 0;
  private readonly partial = new Map<string, string>();
  private readonly followers = new Set<(l: LogLine) => void>();
  private readonly enders = new Set<() => void>();
  /** False once the current container instance has exited (a follow stream then ends). */
  running = false;

  constructor(private readonly limitBytes: number) {}

  /** Appends raw output of one stream; incomplete lines wait for their newline. */
  write(stream: 'stdout' | 'stderr', chunk: Buffer | string): void {
    const text = (this.partial.get(stream) ?? '') + chunk.toString();
    const parts = text.split('\n');
    this.partial.set(stream, parts.pop() ?? '');
    for (const p of parts) this.push(`${p}\n`);
  }

  private push(text: string): void {
    const line: LogLine = { at: new Date(), text };
    this.lines.push(line);
    this.bytes += text.length;
    while (this.bytes > this.limitBytes && this.lines.length > 1) this.bytes -= this.lines.shift()?.text.length ?? 0;
    for (const f of this.followers) f(line);
  }

  /** Flushes partial lines and ends follow streams (the container instance exited). */
  end(): void {
    for (const rest of this.partial.values()) if (rest) this.push(rest);
    for (const stream of [...this.partial.keys()]) this.partial.set(stream, '');
    this.running = false;
    for (const e of this.enders) e();
  }

  select(q: LogQuery): LogLine[] {
    let out = this.lines;
    const since = q.sinceTime ?? (q.sinceSeconds !== undefined ? new Date(Date.now() - q.sinceSeconds * 1000) : undefined);
    if (since) out = out.filter((l) => l.at >= since);
    if (q.tailLines !== undefined) out = q.tailLines <= 0 ? [] : out.slice(-q.tailLines);
    return out;
  }

  follow(onLine: (l: LogLine) => void, onEnd: () => void): () => void {
    this.followers.add(onLine);
    this.enders.add(onEnd);
    return () => {
      this.followers.delete(onLine);
      this.enders.delete(onEnd);
    };
  }
}
