import type { Value } from '../cty/value';
import type { AttributePath, Diagnostic } from './diagnostics';
import type { Schema } from './schema';

/**
 * What a provider is, independent of the wire: schemas and functions over decoded values. The
 * gRPC layer (`src/plugin`) decodes Terraform's requests into these calls and encodes the
 * results back; everything here can be tested without Terraform.
 *
 * `C` is what a configured provider hands its resources (an API client, a logger, a stop signal).
 */
export interface Outcome {
  state: Value;
  diagnostics: Diagnostic[];
}

export interface PlanOutcome {
  planned: Value;
  requiresReplace: AttributePath[];
  diagnostics: Diagnostic[];
}

export interface ResourceType<C> {
  typeName: string;
  schema: Schema;
  validate(config: Value): Diagnostic[];
  plan(prior: Value, config: Value): PlanOutcome;
  /** Refresh; a null state means the object is gone and Terraform should forget it. */
  read(ctx: C, state: Value): Promise<Outcome>;
  /** Create (prior null), update, or delete (planned null). */
  apply(ctx: C, prior: Value, planned: Value): Promise<Outcome>;
  importState(ctx: C, id: string): Promise<Outcome>;
}

export interface DataSourceType<C> {
  typeName: string;
  schema: Schema;
  validate(config: Value): Diagnostic[];
  read(ctx: C, config: Value): Promise<Outcome>;
}

export interface ProviderDefinition<C> {
  schema: Schema;
  resources: readonly ResourceType<C>[];
  dataSources: readonly DataSourceType<C>[];
  validateConfig(config: Value): Diagnostic[];
  /** Returns the context for later calls, or the diagnostics that prevent configuring. */
  configure(config: Value, terraformVersion: string): { context?: C; diagnostics: Diagnostic[] };
  /** Terraform asked to stop (Ctrl-C): long waits should end now. */
  stop(): void;
}
