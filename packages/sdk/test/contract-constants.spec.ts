import { SANDBOX_STATES, TERMINAL_SANDBOX_STATES, type SandboxState as ContractSandboxState, type SandboxStatus as WireStatus } from '@paddock/contracts';
import { TERMINAL_STATES, type SandboxState, type SandboxStatus as SdkStatus } from '../src/types';

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
      STATE_PAUSED: true,
    };
    expect(Object.keys(sdkStates).sort()).toEqual([...SANDBOX_STATES].sort());
  });

  it('ends waits on exactly the contract terminal states', () => {
    expect([...TERMINAL_STATES].sort()).toEqual([...TERMINAL_SANDBOX_STATES].sort());
  });
});

// The sandbox resource the SDK reads is the gateway's wire shape: every status field the contract
// defines must fit the SDK's type, and every field the SDK names must exist in the contract (the
// gateway adds only `placement` and `services`). Renaming a status field on either side fails this typecheck.
type NamedKeys<T> = keyof { [K in keyof T as string extends K ? never : K]: T[K] };
const wireFitsSdk: WireStatus extends SdkStatus ? true : false = true;
const sdkNamesOnlyWireFields: [Exclude<NamedKeys<SdkStatus>, NamedKeys<WireStatus> | 'placement' | 'services'>] extends [never] ? true : false = true;
const sdkNamesEveryWireField: [Exclude<'state' | 'stateReason' | 'message' | 'exitCode' | 'runnerId' | 'runnerGroupId' | 'createTime' | 'startTime' | 'endTime', NamedKeys<SdkStatus>>] extends [never] ? true : false = true;

describe('SDK wire types that mirror the platform contract', () => {
  it('reads the sandbox status the gateway sends', () => {
    expect([wireFitsSdk, sdkNamesOnlyWireFields, sdkNamesEveryWireField]).toEqual([true, true, true]);
  });
});
