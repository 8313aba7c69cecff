import { CreatesInFlight } from '../src/sandboxes/creates-in-flight';

describe('CreatesInFlight: state events of a create in flight wait for it', () => {
  it('holds the events of a create in flight and applies them in arrival order when it settles', () => {
    const creates = new CreatesInFlight();
    const applied: string[] = [];
    creates.begin('sb-1');
    expect(creates.hold('sb-1', () => applied.push('PENDING'))).toBe(true);
    expect(creates.hold('sb-1', () => applied.push('CREATING'))).toBe(true);
    expect(creates.hold('sb-1', () => applied.push('RUNNING'))).toBe(true);
    expect(applied).toEqual([]);
    creates.end('sb-1');
    expect(applied).toEqual(['PENDING', 'CREATING', 'RUNNING']);
    expect(creates.size).toBe(0);
  });

  it('holds nothing for a sandbox whose create is not in flight (before, after, or another gateway’s)', () => {
    const creates = new CreatesInFlight();
    expect(creates.hold('sb-1', () => undefined)).toBe(false);
    creates.begin('sb-1');
    expect(creates.hold('sb-2', () => undefined)).toBe(false);
    creates.end('sb-1');
    expect(creates.hold('sb-1', () => undefined)).toBe(false);
    // A second end (nothing held) applies nothing twice.
    let runs = 0;
    creates.begin('sb-3');
    creates.hold('sb-3', () => runs++);
    creates.end('sb-3');
    creates.end('sb-3');
    expect(runs).toBe(1);
  });
});
