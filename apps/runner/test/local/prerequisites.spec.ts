import { checkLocalBackendPrerequisites } from '../../src/backend/local';

describe('checkLocalBackendPrerequisites', () => {
  it('passes on this machine (root, bwrap, python3, cgroups, user namespaces)', () => {
    expect(checkLocalBackendPrerequisites()).toEqual({ ok: true, problems: [] });
  });

  it('names what is missing', () => {
    const r = checkLocalBackendPrerequisites({ bwrapPath: '/nonexistent/bwrap', cgroupRoot: '/nonexistent/cgroup' });
    expect(r.ok).toBe(false);
    expect(r.problems).toEqual([
      'bubblewrap not found at /nonexistent/bwrap (install it: apt-get install bubblewrap)',
      'no usable cgroups under /nonexistent/cgroup: need cgroup v2 (cgroup.controllers) or v1 with cpu, memory and pids mounted',
    ]);
  });
});
