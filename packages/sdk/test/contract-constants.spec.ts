import { SANDBOX_STATES, TERMINAL_SANDBOX_STATES, type SandboxState as ContractSandboxState } from '@paddock/contracts';
import { TERMINAL_STATES, type SandboxState } from '../src/types';

// The SDK depends on nothing of the workspace (users install it alone), so it keeps its own
// copy of these constants; this test is what keeps the copy equal to the contract.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const statesMatch: Same<SandboxState, ContractSandboxState> = true;

describe('SDK constants that copy the platform contract', () => {
  it('names exactly the contract sandbox states', () => {
    expect(statesMatch).toBe(true);
    const sdkStates: Record<SandboxState, true> = {
      STATE_UNSPECIFIED: true,
      STATE_PENDING: true,
      STATE_CREATING: true,
      STATE_RUNNING: true,
      STATE_TERMINATING: true,
      STATE_COMPLETED: true,
      STATE_FAILED: true,
    };
    expect(Object.keys(sdkStates).sort()).toEqual([...SANDBOX_STATES].sort());
  });

  it('ends waits on exactly the contract terminal states', () => {
    expect([...TERMINAL_STATES].sort()).toEqual([...TERMINAL_SANDBOX_STATES].sort());
  });
});
