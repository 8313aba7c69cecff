import {
  checkLocalBackendPrerequisites,
  localBackendProblems,
  probeLocalBackend,
  type LocalBackendFacts,
} from '../../src/backend/local';

describe('checkLocalBackendPrerequisites', () => {
  it('passes on this machine (root, bwrap, python3, cgroups, user namespaces)', () => {
    expect(checkLocalBackendPrerequisites()).toEqual({ ok: true, problems: [] });
  });

  it('names what is missing on this machine, with the command that fixes it', () => {
    const r = checkLocalBackendPrerequisites({
      bwrapPath: '/nonexistent/bwrap',
      cgroupRoot: '/nonexistent/cgroup',
    });
    expect(r.ok).toBe(false);
    expect(r.problems).toEqual([
      {
        prerequisite: 'bubblewrap',
        problem: 'bubblewrap not found at /nonexistent/bwrap',
        fix: 'apt-get install bubblewrap',
      },
      {
        prerequisite: 'cgroups',
        problem:
          'no usable cgroups under /nonexistent/cgroup: need cgroup v2 (cgroup.controllers) or v1 with cpu, memory and pids mounted',
        fix: 'mount -t cgroup2 none /nonexistent/cgroup',
      },
    ]);
  });
});

describe('localBackendProblems (facts in, problems out)', () => {
  const healthy: LocalBackendFacts = {
    ...probeLocalBackend(),
    platform: 'linux',
    uid: 0,
    bwrapExecutable: true,
    pythonExecutable: true,
    cgroupMode: 'v1',
    missingV1Controllers: [],
    missingV2Controllers: [],
    maxUserNamespaces: 1000,
    unprivilegedUsernsClone: undefined,
    apparmorRestrictsUserns: undefined,
    sandboxProbe: { ok: true, detail: 'exit 0' },
  };
  const only = (facts: Partial<LocalBackendFacts>) =>
    localBackendProblems({ ...healthy, ...facts });

  it('finds nothing on a healthy machine', () => {
    expect(only({})).toEqual([]);
  });

  it('root, Linux and python3', () => {
    expect(only({ uid: 1000 })).toEqual([
      expect.objectContaining({ prerequisite: 'root', fix: 'sudo -E pnpm start' }),
    ]);
    expect(only({ platform: 'darwin' })).toEqual([
      {
        prerequisite: 'Linux',
        problem: 'the local backend needs Linux (this is darwin)',
        fix: 'run Paddock in a Linux VM or a privileged Linux container',
      },
    ]);
    expect(only({ pythonExecutable: false, pythonPath: '/usr/bin/python3' })).toEqual([
      {
        prerequisite: 'python3',
        problem:
          'python3 not found at /usr/bin/python3 (the per-sandbox supervisor is a Python 3 script)',
        fix: 'apt-get install python3',
      },
    ]);
  });

  it('cgroup v1 with some controllers missing: mounts exactly those', () => {
    expect(
      only({
        cgroupMode: undefined,
        cgroupRoot: '/sys/fs/cgroup',
        missingV1Controllers: ['memory', 'cpu'],
      }),
    ).toEqual([
      expect.objectContaining({
        prerequisite: 'cgroups',
        fix: 'mkdir -p /sys/fs/cgroup/memory && mount -t cgroup -o memory cgroup /sys/fs/cgroup/memory && mkdir -p /sys/fs/cgroup/cpu && mount -t cgroup -o cpu cgroup /sys/fs/cgroup/cpu',
      }),
    ]);
  });

  it('cgroup v2 without the pids controller', () => {
    expect(
      only({ cgroupMode: 'v2', missingV2Controllers: ['pids'], cgroupRoot: '/sys/fs/cgroup' }),
    ).toEqual([
      {
        prerequisite: 'cgroup controllers',
        problem:
          'cgroup v2 at /sys/fs/cgroup does not offer pids (sandboxes are capped with cpu, memory and pids)',
        fix: 'on the host: echo "+pids" > /sys/fs/cgroup/cgroup.subtree_control, and run this container with --cgroupns=host',
      },
    ]);
  });

  it('user namespaces: disabled, unreadable, and refused to an unprivileged user (Debian and Ubuntu switches)', () => {
    expect(only({ maxUserNamespaces: 0 })).toEqual([
      {
        prerequisite: 'user namespaces',
        problem: 'user namespaces are disabled (user.max_user_namespaces = 0)',
        fix: 'sysctl -w user.max_user_namespaces=15000',
      },
    ]);
    expect(only({ maxUserNamespaces: undefined })).toEqual([
      expect.objectContaining({
        prerequisite: 'user namespaces',
        fix: expect.stringContaining('CONFIG_USER_NS') as string,
      }),
    ]);
    const refused = {
      sandboxUid: 65534,
      sandboxProbe: { ok: false, detail: 'bwrap: setting up uid map: Permission denied' },
    };
    expect(only({ ...refused, unprivilegedUsernsClone: 0 })).toEqual([
      {
        prerequisite: 'unprivileged user namespaces',
        problem:
          'bubblewrap cannot create an unprivileged sandbox as uid 65534: bwrap: setting up uid map: Permission denied',
        fix: 'sysctl -w kernel.unprivileged_userns_clone=1',
      },
    ]);
    expect(only({ ...refused, apparmorRestrictsUserns: 1 })[0]?.fix).toBe(
      'sysctl -w kernel.apparmor_restrict_unprivileged_userns=0',
    );
  });
});
