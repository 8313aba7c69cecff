"""The capabilities a sandbox process keeps, and the network namespace knob NET_BIND_SERVICE needs.

A handler that entered the sandbox's user namespace as root holds every capability there; what it
runs must hold only the container's (none, or what its securityContext added and the runner
gives), whatever uid it runs as inside (uid 0 included): the bounding set is cut to them, the
process sets are set to them, and for a non-zero uid they are raised as ambient so they survive
the exec, as bwrap does for the container's own processes with --cap-add."""
import ctypes, os, struct

from paddock_supervisor.sysutil import libc

PR_SET_KEEPCAPS, PR_CAPBSET_DROP, PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE = 8, 24, 47, 2
LINUX_CAPABILITY_VERSION_3 = 0x20080522
# Only what the runner gives (local/security-context.ts): any other name fails the operation.
CAPS = {'CAP_NET_BIND_SERVICE': 10}
LOW_PORTS = '/proc/sys/net/ipv4/ip_unprivileged_port_start'

def cap_numbers(names):
  out = set()
  for n in names:
    if n not in CAPS: raise OSError(1, 'capability %s is not one the runner gives' % n)
    out.add(CAPS[n])
  return out

def cut_bounding_set(keep):
  # Called while the process still holds CAP_SETPCAP in the namespace; EINVAL marks the kernel's last capability.
  cap = 0
  while True:
    if cap not in keep and libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
      e = ctypes.get_errno()
      if e == 22: return
      raise OSError(e, 'drop capability %d from the bounding set: %s' % (cap, os.strerror(e)))
    cap += 1

def set_capabilities(keep):
  mask = 0
  for cap in keep: mask |= 1 << cap
  lo, hi = mask & 0xFFFFFFFF, mask >> 32
  header = ctypes.create_string_buffer(struct.pack('<Ii', LINUX_CAPABILITY_VERSION_3, 0), 8)
  data = ctypes.create_string_buffer(struct.pack('<IIIIII', lo, lo, lo, hi, hi, hi), 24)
  if libc.capset(header, data) != 0:
    e = ctypes.get_errno()
    raise OSError(e, 'capset: %s' % os.strerror(e))
  for cap in sorted(keep):
    if libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, cap, 0, 0) != 0:
      e = ctypes.get_errno()
      raise OSError(e, 'raise ambient capability %d: %s' % (cap, os.strerror(e)))

def become(uid, gid, cap_names):
  """setresgid/setresuid to uid/gid keeping exactly `cap_names` (and nothing else, even as uid 0)."""
  keep = cap_numbers(cap_names)
  cut_bounding_set(keep)
  if keep: libc.prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0)
  os.setresgid(gid, gid, gid)
  os.setresuid(uid, uid, uid)
  set_capabilities(keep)

def allow_low_ports():
  # In the sandbox's network namespace (the launcher's, still root on the host): binding below 1024
  # needs no capability there. The namespace belongs to the host's user namespace, so nothing
  # inside the sandbox can change it back or further.
  with open(LOW_PORTS, 'w') as f: f.write('0')
