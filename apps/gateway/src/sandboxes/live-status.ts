import { isTerminalSandboxState, type ResourceUsage, type Sandbox, type SandboxState } from '@paddock/contracts';
import type { SandboxView } from './sandbox-view';

/** Where the gateway finds a sandbox's last usage sample: its runner's heartbeat. */
export type UsageLookup = (runnerId: string, sandboxId: string) => ResourceUsage | undefined;

/**
 * `status.resourceUsage` of a live sandbox, from its runner's last heartbeat (the runner samples
 * its cgroups once per heartbeat). Nothing is stored: an ended sandbox, or one whose runner has
 * not reported it yet, shows none.
 */
export function withUsage(view: SandboxView, usageOf: UsageLookup | undefined): SandboxView {
  if (!usageOf || isTerminalSandboxState(view.status.state as SandboxState)) return view;
  const usage = usageOf(view.status.runnerId, view.sandboxId);
  return usage ? { ...view, status: { ...view.status, resourceUsage: usage } } : view;
}

/**
 * The reply of a pause or resume: the stored view with the state the runner just answered with.
 * The runner's state event, which updates the row, may still be in flight.
 */
export function withRunnerState(view: SandboxView, sb: Sandbox): SandboxView {
  const { stateReason, ...status } = view.status;
  return {
    ...view,
    status: {
      ...status,
      state: sb.status.state,
      ...(sb.status.stateReason !== undefined ? { stateReason: sb.status.stateReason } : stateReason !== undefined && sb.status.state !== 'STATE_RUNNING' ? { stateReason } : {}),
    },
  };
}
