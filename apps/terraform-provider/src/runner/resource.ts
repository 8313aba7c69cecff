import { ApiError } from '../api/client';
import { apiErrorDiagnostics } from '../api/diagnostics';
import { attr, isObjectValue, type Value, type ValueObject } from '../cty/value';
import { error, type Diagnostic } from '../framework/diagnostics';
import type { Outcome, ResourceType } from '../framework/provider';
import type { RunnerContext } from './context';
import { planRunner } from './plan';
import { RESOURCE_ATTRIBUTES, RESOURCE_SCHEMA, RESOURCE_TYPE } from './schema';
import { createBody, runnerToState } from './state';
import { showDuration, waitForTeardown } from './teardown';
import { runnerPatch } from './update';
import { validateRunnerConfig } from './validate';

const runnerIdOf = (state: Value): string => {
  const id = attr(state, 'runner_id') ?? attr(state, 'id');
  return typeof id === 'string' ? id : '';
};

const failed = (e: unknown, doing: string, ctx: RunnerContext, state: Value): Outcome => ({
  state,
  diagnostics: apiErrorDiagnostics(e, doing, ctx.client.endpoint, RESOURCE_ATTRIBUTES),
});

async function create(ctx: RunnerContext, planned: ValueObject): Promise<Outcome> {
  const id = runnerIdOf(planned);
  // One request id for the whole create, so a retried POST cannot create two runners.
  const body = createBody(planned, ctx.newRequestId());
  try {
    const runner = await ctx.client.createRunner(body);
    return { state: runnerToState(runner, planned), diagnostics: [] };
  } catch (e) {
    const out = failed(e, `creating managed runner ${JSON.stringify(id)}`, ctx, null);
    if (e instanceof ApiError && e.details.code === 'already_exists') {
      out.diagnostics.push(
        error(
          'The runner or its cluster is already managed',
          `A runner with this id exists, or the cluster already has its one managed runner. To manage an existing runner with Terraform, import it: terraform import ${RESOURCE_TYPE}.<name> '${id}'`,
        ),
      );
    }
    return out;
  }
}

/** The diagnostic of a policy write refused because the policy changed since the refresh. */
export function stalePolicyDiagnostic(runnerId: string, etag: Value): Diagnostic {
  return error(
    'The runner policy changed since Terraform read it',
    `The policy of managed runner ${JSON.stringify(runnerId)} was changed by someone else after the refresh this plan is based on (etag ${JSON.stringify(etag)} is stale), so the API refused the update and nothing was changed. Refresh the state and review a new plan before retrying: run terraform plan (or terraform apply -refresh-only to see the current policy), then apply the new plan.`,
    ['policy'],
  );
}

async function update(ctx: RunnerContext, prior: ValueObject, planned: ValueObject): Promise<Outcome> {
  const id = runnerIdOf(prior);
  const patch = runnerPatch(prior, planned);
  try {
    const runner = patch.updateMask.length === 0 ? await ctx.client.getRunner(id) : await ctx.client.updateRunner(id, patch.updateMask, patch.body);
    if (!runner) return { state: null, diagnostics: [error('Managed runner not found', `Managed runner ${JSON.stringify(id)} no longer exists; the next plan will create it again.`)] };
    return { state: runnerToState(runner, planned), diagnostics: [] };
  } catch (e) {
    if (e instanceof ApiError && e.details.reason === 'PADDOCK_ETAG_STALE') return { state: prior, diagnostics: [stalePolicyDiagnostic(id, attr(prior, 'etag'))] };
    // The API applies a PATCH whole or not at all: the prior state is still the truth.
    return failed(e, `updating managed runner ${JSON.stringify(id)} (${patch.updateMask.join(', ')})`, ctx, prior);
  }
}

async function destroy(ctx: RunnerContext, prior: ValueObject): Promise<Outcome> {
  const id = runnerIdOf(prior);
  try {
    await ctx.client.deleteRunner(id);
    ctx.log.log('info', `Deletion of managed runner ${id} accepted; waiting for its teardown`);
    const result = await waitForTeardown(id, { getRunner: (ref) => ctx.client.getRunner(ref), now: ctx.now, sleep: ctx.sleep, log: ctx.log, stopped: ctx.stopped }, ctx.teardownTimeoutMs);
    if (result.gone) return { state: null, diagnostics: [] };
    const why =
      result.reason === 'timeout'
        ? `it still exists after ${showDuration(result.waitedMs)} (install status ${result.lastStatus})`
        : `Terraform was interrupted after ${showDuration(result.waitedMs)} (install status ${result.lastStatus})`;
    return {
      state: prior,
      diagnostics: [
        error(
          'Managed runner teardown not finished',
          `The deletion of managed runner ${JSON.stringify(id)} was accepted, but ${why}. It stays in the Terraform state; run the destroy again to keep waiting, and see its install status and install_error for what blocks the controller.`,
        ),
      ],
    };
  } catch (e) {
    return failed(e, `deleting managed runner ${JSON.stringify(id)}`, ctx, prior);
  }
}

export const managedRunnerResource: ResourceType<RunnerContext> = {
  typeName: RESOURCE_TYPE,
  schema: RESOURCE_SCHEMA,
  validate: validateRunnerConfig,
  plan(prior, config) {
    return { ...planRunner(prior, config), diagnostics: [] };
  },
  async read(ctx, state) {
    const id = runnerIdOf(state);
    try {
      const runner = await ctx.client.getRunner(id);
      if (!runner) ctx.log.log('info', `Managed runner ${id} no longer exists; removing it from state`);
      return { state: runner ? runnerToState(runner, state) : null, diagnostics: [] };
    } catch (e) {
      return failed(e, `reading managed runner ${JSON.stringify(id)}`, ctx, state);
    }
  },
  async apply(ctx, prior, planned) {
    if (!isObjectValue(planned)) return isObjectValue(prior) ? destroy(ctx, prior) : { state: null, diagnostics: [] };
    if (!isObjectValue(prior)) return create(ctx, planned);
    return update(ctx, prior, planned);
  },
  async importState(ctx, id) {
    try {
      const runner = await ctx.client.getRunner(id);
      if (!runner) {
        return {
          state: null,
          diagnostics: [error('Cannot import a managed runner that does not exist', `No managed runner ${JSON.stringify(id)} exists in the organization of this API token. The import id is the runner id, not the cluster UUID.`)],
        };
      }
      return { state: runnerToState(runner, null), diagnostics: [] };
    } catch (e) {
      return failed(e, `importing managed runner ${JSON.stringify(id)}`, ctx, null);
    }
  },
};
