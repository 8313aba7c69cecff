import { Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { AppConfig } from '../../config/app-config';
import { Clock } from '../../infrastructure/tokens';
import { mayStartUpdate } from './maintenance-window';
import { MaintenanceRunners } from './maintenance.port';

export interface MaintenanceTickResult {
  at: Date;
  considered: number;
  applied: string[];
  deferred: string[];
  failed: string[];
}

/**
 * Every `maintenanceIntervalMs`, starts the pending update of each runner whose maintenance
 * policy allows an update to start now (by the injected Clock). Several replicas may tick at
 * once: the update command is a no-op once the target is the latest release.
 */
@Injectable()
export class MaintenanceScheduler implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly log = new Logger('MaintenanceScheduler');
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<MaintenanceTickResult> | undefined;

  constructor(
    private readonly runners: MaintenanceRunners,
    private readonly clock: Clock,
    private readonly config: AppConfig,
  ) {}

  onApplicationBootstrap(): void {
    const every = this.config.maintenanceIntervalMs;
    if (every <= 0) return;
    this.timer = setInterval(() => {
      void this.tick().catch((e: unknown) => this.log.error(`maintenance tick failed: ${String(e)}`));
    }, every);
    this.timer.unref();
  }

  async onModuleDestroy(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.running?.catch(() => undefined);
  }

  /** One pass; overlapping calls share the pass in flight. */
  tick(): Promise<MaintenanceTickResult> {
    this.running ??= this.pass().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private async pass(): Promise<MaintenanceTickResult> {
    const at = this.clock.now();
    const result: MaintenanceTickResult = { at, considered: 0, applied: [], deferred: [], failed: [] };
    for (const r of await this.runners.listForMaintenance()) {
      if (!r.updateAvailable) continue;
      result.considered++;
      const key = `${r.organizationId}/${r.runnerId}`;
      const verdict = mayStartUpdate(r.maintenancePolicy, at);
      if (!verdict.allowed) {
        result.deferred.push(key);
        continue;
      }
      try {
        await this.runners.applyAvailableUpdate(r.organizationId, r.runnerId);
        result.applied.push(key);
        this.log.log(`started update of runner ${key} (${verdict.reason})`);
      } catch (e) {
        result.failed.push(key);
        this.log.warn(`could not start the update of runner ${key}: ${e instanceof Error ? e.message : String(e)}`);
      }
    }
    return result;
  }
}
