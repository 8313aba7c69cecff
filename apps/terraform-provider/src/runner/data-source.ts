import { apiErrorDiagnostics } from '../api/diagnostics';
import { attr, type Value } from '../cty/value';
import { error } from '../framework/diagnostics';
import type { DataSourceType } from '../framework/provider';
import type { RunnerContext } from './context';
import { DATA_SOURCE_SCHEMA, RESOURCE_TYPE } from './schema';
import { runnerToState } from './state';

/** `data "coreweave_sandbox_managed_runner"`: a runner's settings, policy and status, by runner id. */
export const managedRunnerDataSource: DataSourceType<RunnerContext> = {
  typeName: RESOURCE_TYPE,
  schema: DATA_SOURCE_SCHEMA,
  validate: () => [],
  async read(ctx, config: Value) {
    const id = attr(config, 'runner_id');
    if (typeof id !== 'string' || id === '') return { state: null, diagnostics: [error('Missing runner_id', 'runner_id must name the managed runner to read.', ['runner_id'])] };
    try {
      const runner = await ctx.client.getRunner(id);
      if (!runner) return { state: null, diagnostics: [error('Managed runner not found', `No managed runner ${JSON.stringify(id)} exists in the organization of this API token.`, ['runner_id'])] };
      // The configuration's spelling stays (it may be the runner's UUID).
      return { state: { ...runnerToState(runner, null), runner_id: id }, diagnostics: [] };
    } catch (e) {
      return { state: null, diagnostics: apiErrorDiagnostics(e, `reading managed runner ${JSON.stringify(id)}`, ctx.client.endpoint, DATA_SOURCE_SCHEMA.attributes) };
    }
  },
};
