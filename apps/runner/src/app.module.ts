import { Inject, Injectable, Module, type DynamicModule, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { startRunner, type RunnerOptions, type RunningRunner } from './runner';

export const RUNNER_OPTIONS = Symbol('RUNNER_OPTIONS');

/**
 * Nest is only the shell here: DI of the parsed options and the lifecycle hooks. Tokens are
 * injected explicitly (no reliance on emitted decorator metadata), so the module also runs
 * under tsx in development.
 */
@Injectable()
export class RunnerLifecycle implements OnApplicationBootstrap, OnApplicationShutdown {
  private runner: RunningRunner | undefined;

  constructor(@Inject(RUNNER_OPTIONS) private readonly options: RunnerOptions) {}

  async onApplicationBootstrap(): Promise<void> {
    this.runner = await startRunner(this.options);
  }

  /** Stops taking work and drains NATS; sandboxes keep running for the next runner process to adopt. */
  async onApplicationShutdown(): Promise<void> {
    await this.runner?.stop();
  }

  get running(): RunningRunner | undefined {
    return this.runner;
  }
}

@Module({})
export class RunnerModule {
  static forRoot(options: RunnerOptions): DynamicModule {
    return {
      module: RunnerModule,
      providers: [{ provide: RUNNER_OPTIONS, useValue: options }, RunnerLifecycle],
      exports: [RunnerLifecycle],
    };
  }
}
