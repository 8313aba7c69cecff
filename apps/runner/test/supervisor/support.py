"""Puts the supervisor's sources on sys.path and finds the plan schema the runner emits."""
import json, os, sys

SUPERVISOR_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'supervisor')
sys.path.insert(0, os.path.normpath(SUPERVISOR_DIR))


def emitted_schema():
  # Written by test/unit/supervisor-python.spec.ts from SupervisorPlanSchema (zod) before it runs
  # these tests: the schema under test is always the runner's current one.
  path = os.environ.get('PADDOCK_PLAN_SCHEMA')
  if not path: raise RuntimeError('PADDOCK_PLAN_SCHEMA is not set: run these tests through vitest (test/unit/supervisor-python.spec.ts)')
  with open(path) as f: return json.load(f)


def sample_plan(**over):
  """A plan as the runner writes it (see local-backend.ts launch)."""
  p = {
    'sandboxId': 'sbx-1', 'dir': '/run/paddock/r/sandboxes/sbx-1', 'uid': 65534, 'gid': 65534,
    'bwrapExe': '/usr/bin/bwrap', 'bwrap': ['bwrap', '--', 'sleep', 'infinity'],
    'execEnv': {'PATH': '/usr/bin:/bin'}, 'execCwd': '/workspace',
    'cgroupProcs': ['/sys/fs/cgroup/pids/paddock/r.1/sbx-1/cgroup.procs'],
    'cgroupDirs': ['/sys/fs/cgroup/pids/paddock/r.1/sbx-1'],
    'oomFile': '/sys/fs/cgroup/memory/paddock/r.1/sbx-1/memory.oom_control',
    'cpuSteady': {'file': '/sys/fs/cgroup/cpu/paddock/r.1/sbx-1/cpu.cfs_quota_us', 'value': '10000'},
    'nofile': 1024, 'deadlineMs': 1764650000000, 'lifetimeSeconds': 600, 'memoryBytes': 268435456,
    'termGraceMs': 2000, 'diskBytes': 67108864, 'logCapBytes': 10485760,
    'files': [{'rel': 'workspace/a.txt', 'b64': 'aGk='}],
  }
  p.update(over)
  return p
