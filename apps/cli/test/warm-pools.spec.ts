import type { ManagedRunner } from '@paddock/contracts';
import { warmPoolLines } from '../src/actions/warm-pools';
import { planPatch } from '../src/patch';

const runner = (over: Pick<ManagedRunner, 'warmPoolStatus'> & { warmPools: ManagedRunner['spec']['warmPools'] }): ManagedRunner =>
  ({ spec: { warmPools: over.warmPools }, warmPoolStatus: over.warmPoolStatus }) as unknown as ManagedRunner;

describe('warm pools in the CLI', () => {
  it('describe shows each pool beside what the runner reports ready, and why it cannot fill', () => {
    const template = { containers: [{ name: 'main', resources: { cpu: '100m', memory: '128Mi' } }] };
    const lines = warmPoolLines(
      runner({
        warmPools: [
          { name: 'agents', size: 5, template },
          { name: 'big', size: 2, template },
          { name: 'new', size: 1, template },
        ],
        warmPoolStatus: [
          { name: 'agents', size: 5, ready: 3 },
          { name: 'big', size: 2, ready: 0, error: 'runner at capacity: 2/2 sandboxes' },
        ],
      }),
    );
    expect(lines[0]).toBe('Warm pools:');
    expect(lines[1]).toMatch(/^ {2}agents: 3\/5 ready {2}template \{/);
    expect(lines[2]).toContain('big: 0/2 ready (runner at capacity: 2/2 sandboxes)');
    expect(lines[3]).toContain('new: 1 wanted, not reported yet');
    expect(warmPoolLines(runner({ warmPools: [], warmPoolStatus: [] }))).toEqual(['Warm pools:      none']);
  });

  it('edit -f replaces the pool list whole under spec.warm_pools, and never sends the reported status', () => {
    const plan = planPatch({ spec: { warmPools: [{ name: 'agents', size: 2, template: {} }] }, warmPoolStatus: [{ name: 'agents', size: 5, ready: 5 }] });
    expect(plan.mask).toEqual(['spec.warm_pools']);
    expect(plan.body).toEqual({ spec: { warmPools: [{ name: 'agents', size: 2, template: {} }] } });
  });
});
