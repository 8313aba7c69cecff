import { Client, type ClientConfig } from 'pg';

export const LOG_CHANNEL = 'es_log_committed';

/**
 * Cheap wake-ups for log consumers.
 *
 * Why not `NOTIFY` inside each append: a transaction with a pending NOTIFY takes a global lock at
 * commit, which cut concurrent commit throughput to ~0.42x here. So writers
 * call {@link nudge} *after* their commit; nudges are coalesced per process: at most one NOTIFY
 * is in flight, and any nudge that arrives meanwhile is folded into exactly one follow-up NOTIFY
 * (sent after the in-flight one, hence after every commit that asked for it).
 *
 * Listeners share one dedicated connection (never a pool connection). A wake-up is only a hint:
 * consumers still poll (the safety net) and always read the log by the horizon rule.
 */
export class LogWaker {
  private client: Client | undefined;
  private connecting: Promise<Client> | undefined;
  private listening = false;
  private closed = false;
  private inFlight = false;
  private dirty = false;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private readonly listeners = new Set<() => void>();
  /** Counters for benchmarks and tests. */
  readonly stats = { nudges: 0, notifiesSent: 0, wakesReceived: 0, errors: 0 };

  constructor(
    private readonly config: ClientConfig,
    private readonly channel: string = LOG_CHANNEL,
  ) {}

  /** Registers a wake-up callback; resolves once this process is LISTENing. */
  async subscribe(listener: () => void): Promise<() => void> {
    this.listeners.add(listener);
    try {
      await this.ensureListening();
    } catch {
      // The listener still gets woken after a reconnect; until then the consumer polls.
      this.errorHappened();
      this.scheduleReconnect();
    }
    return () => {
      this.listeners.delete(listener);
    };
  }

  /** Tells every consumer (in every process) that something was committed. Never throws. */
  nudge(): void {
    if (this.closed) return;
    this.stats.nudges++;
    // Consumers in this process are woken at once; the NOTIFY below is for other processes
    // (its echo to our own connection is ignored in the notification handler).
    if (this.listeners.size > 0) queueMicrotask(() => this.wakeAll());
    if (this.inFlight) {
      this.dirty = true;
      return;
    }
    this.inFlight = true;
    void this.sendNotifies();
  }

  async close(): Promise<void> {
    this.closed = true;
    this.listeners.clear();
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    const client = this.client ?? (await this.connecting?.catch(() => undefined));
    this.client = undefined;
    this.connecting = undefined;
    if (client) await client.end().catch(() => undefined);
  }

  private async sendNotifies(): Promise<void> {
    try {
      do {
        this.dirty = false;
        const client = await this.connect();
        await client.query('SELECT pg_notify($1, $2)', [this.channel, '']);
        this.stats.notifiesSent++;
      } while (this.dirty && !this.closed);
    } catch {
      this.errorHappened();
    } finally {
      this.inFlight = false;
    }
  }

  private async ensureListening(): Promise<void> {
    const client = await this.connect();
    if (this.listening) return;
    await client.query(`LISTEN ${quoteIdent(this.channel)}`);
    this.listening = true;
  }

  private async connect(): Promise<Client> {
    if (this.closed) throw new Error('LogWaker is closed');
    if (this.client) return this.client;
    this.connecting ??= (async () => {
      const client = new Client({ ...this.config, application_name: 'paddock-log-waker' });
      client.on('notification', (msg) => {
        if (msg.channel !== this.channel) return;
        if (msg.processId === this.ownBackendPid(client)) return; // our own nudge: already woken locally
        this.wakeAll();
      });
      client.on('error', () => this.dropConnection(client));
      client.on('end', () => this.dropConnection(client));
      try {
        await client.connect();
      } catch (e) {
        this.connecting = undefined;
        throw e;
      }
      this.client = client;
      this.connecting = undefined;
      return client;
    })();
    return this.connecting;
  }

  private ownBackendPid(client: Client): number | undefined {
    // pg keeps the backend pid of the connection on the client (not in its typings).
    const pid: unknown = (client as unknown as { processID?: unknown }).processID;
    return typeof pid === 'number' ? pid : undefined;
  }

  private dropConnection(client: Client): void {
    if (this.client !== client) return;
    this.client = undefined;
    this.listening = false;
    client.end().catch(() => undefined);
    this.scheduleReconnect();
  }

  /** Notifications may have been missed while down: reconnect, then wake everyone once. */
  private scheduleReconnect(): void {
    if (this.closed || this.listeners.size === 0 || this.reconnectTimer) return;
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      this.ensureListening().then(
        () => this.wakeAll(),
        () => {
          this.errorHappened();
          this.scheduleReconnect();
        },
      );
    }, 250);
  }

  private errorHappened(): void {
    this.stats.errors++;
  }

  private wakeAll(): void {
    this.stats.wakesReceived++;
    for (const l of this.listeners) l();
  }
}

function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
