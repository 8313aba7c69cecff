"""Starting a container's bwrap: its pipes, and the launcher that drops to the sandbox user and execs it."""
import ctypes, fcntl, os, resource, signal, socket, struct

from paddock_supervisor.caps import allow_low_ports
from paddock_supervisor.seccomp import seccomp_program
from paddock_supervisor.sysutil import high_fd, libc, reset_signals, PR_SET_PDEATHSIG

CLONE_NEWNET = 0x40000000
IFREQ = struct.Struct('16sH22x')
SIOCGIFFLAGS, SIOCSIFFLAGS, IFF_UP = 0x8913, 0x8914, 0x1

def launcher_pipes():
  # bwrap's stdout, stderr, info (child pid) and seccomp program pipes; the program is written now.
  out_r, out_w = os.pipe()
  err_r, err_w = os.pipe()
  info_r, info_w = os.pipe()
  sc_r, sc_w = os.pipe()
  os.write(sc_w, seccomp_program())
  os.close(sc_w)
  return out_r, out_w, err_r, err_w, info_r, info_w, sc_r

def enter_netns(path):
  # The sandbox's egress namespace (made by the runner), entered while still root: the sandbox
  # user could not, and bwrap then keeps it (--share-net). A missing namespace fails the launch.
  fd = os.open(path, os.O_RDONLY)
  if libc.setns(fd, CLONE_NEWNET) != 0:
    e = ctypes.get_errno()
    raise OSError(e, 'setns net %s: %s' % (path, os.strerror(e)))
  os.close(fd)

ARGS_FD = 5

def env_memfd(argv):
  # bwrap reads the sandbox's env (--setenv, secret values among them) from this file (--args)
  # instead of its command line, which any host user can read in /proc/<pid>/cmdline. bwrap
  # closes the fd once read, so the sandbox never sees it. Every other option stays on the
  # command line, in order, so a bwrap still names its mounts; the command after `--` too.
  end = argv.index('--')
  opts, env, at, i = [], [], None, 0
  while i < end:
    if argv[i] == '--setenv':
      if at is None: at = len(opts)
      env += argv[i:i + 3]
      i += 3
    else:
      opts.append(argv[i])
      i += 1
  if at is None: at = len(opts)
  fd = os.memfd_create('bwrap-env', 0)
  data = b''.join(a.encode() + b'\0' for a in env)
  while data: data = data[os.write(fd, data):]
  os.lseek(fd, 0, os.SEEK_SET)
  return fd, opts[:at] + ['--args', str(ARGS_FD)] + opts[at:] + argv[end:]

def loopback_up():
  # In a fresh network namespace, only `lo` exists, and it is down.
  s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
  try:
    flags = IFREQ.unpack(fcntl.ioctl(s, SIOCGIFFLAGS, IFREQ.pack(b'lo', 0)))[1]
    fcntl.ioctl(s, SIOCSIFFLAGS, IFREQ.pack(b'lo', flags | IFF_UP))
  finally:
    s.close()

def own_loopback_netns():
  # A lone container given low ports: its launcher makes the network namespace bwrap would have
  # made (loopback only), so that it belongs to the host's user namespace and its knob stays set.
  if libc.unshare(CLONE_NEWNET) != 0:
    e = ctypes.get_errno()
    raise OSError(e, 'unshare net: %s' % os.strerror(e))
  loopback_up()

def exec_bwrap(exe, argv, nofile, uid, gid, fds, parent, netns=None, low_ports=False):
  # In the launcher (already in the sandbox's cgroups): stdio and the info/seccomp pipes on 1..4,
  # the env file on 5, nothing else open, the sandbox uid, killed with its supervisor, then bwrap.
  if netns: enter_netns(netns)
  elif low_ports: own_loopback_netns()
  if low_ports: allow_low_ports()
  resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))
  resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
  env_fd, argv = env_memfd(argv)
  src = [high_fd(os.open('/dev/null', os.O_RDONLY))] + [high_fd(fd) for fd in fds] + [high_fd(env_fd)]
  for target, fd in enumerate(src): os.dup2(fd, target)
  os.closerange(ARGS_FD + 1, 1 << 20)
  os.setgroups([])
  os.setresgid(gid, gid, gid)
  os.setresuid(uid, uid, uid)
  libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
  if os.getppid() != parent: os._exit(1)
  reset_signals()
  # No environment at all: bwrap's is what the sandbox's pid 1 shows in /proc/1/environ, and the
  # sandbox's own processes get theirs from --setenv.
  os.execve(exe, argv, {})
