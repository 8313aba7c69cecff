import 'reflect-metadata';
import { type RunnerEnv } from './config/env';
import type { RunnerOptions } from './runner';
/** Builds the runner's options from the parsed environment (the config file fills identity gaps). */
export declare function optionsFromEnv(env: RunnerEnv): Promise<RunnerOptions>;
