import { type DynamicModule, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { type RunnerOptions, type RunningRunner } from './runner';
export declare const RUNNER_OPTIONS: unique symbol;
/**
 * Nest is only the shell here: DI of the parsed options and the lifecycle hooks. Tokens are
 * injected explicitly (no reliance on emitted decorator metadata), so the module also runs
 * under tsx in development.
 */
export declare class RunnerLifecycle implements OnApplicationBootstrap, OnApplicationShutdown {
    private readonly options;
    private runner;
    constructor(options: RunnerOptions);
    onApplicationBootstrap(): Promise<void>;
    /** Stops taking work and drains NATS; sandboxes keep running for the next runner process to adopt. */
    onApplicationShutdown(): Promise<void>;
    get running(): RunningRunner | undefined;
}
export declare class RunnerModule {
    static forRoot(options: RunnerOptions): DynamicModule;
}
