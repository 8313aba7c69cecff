"""Process and file helpers shared by the supervisor, its handlers and the exec daemon."""
import ctypes, fcntl, json, os, signal, socket

libc = ctypes.CDLL(None, use_errno=True)
PR_SET_PDEATHSIG, PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 1, 38, 22, 2
PR_SET_DUMPABLE, PR_SET_NAME, PR_SET_CHILD_SUBREAPER = 4, 15, 36

def write_file(path, data):
  fd = os.open(path, os.O_WRONLY)
  try: os.write(fd, data.encode())
  finally: os.close(fd)

def read_pids(procs):
  try:
    with open(procs) as f: return [int(x) for x in f.read().split()]
  except OSError: return []

def close_fds_except(*keep):
  # Closes every descriptor from 3 up but those in `keep` (None entries ignored).
  lo = 3
  for fd in sorted(fd for fd in keep if fd is not None):
    os.closerange(lo, fd)
    lo = fd + 1
  os.closerange(lo, 1 << 20)

def high_fd(fd):
  return fcntl.fcntl(fd, fcntl.F_DUPFD, 200)

def reset_signals():
  for s in (signal.SIGPIPE, signal.SIGINT, signal.SIGTERM, signal.SIGCHLD, signal.SIGXFSZ):
    try: signal.signal(s, signal.SIG_DFL)
    except (OSError, ValueError): pass

def listen_unix(directory, name):
  path = os.path.join(directory, name)
  sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
  # sockaddr_un holds 108 bytes: bind a deep path through the directory's fd (same as the runner).
  if len(path.encode()) > 100:
    dfd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try: sock.bind('/proc/self/fd/%d/%s' % (dfd, name))
    finally: os.close(dfd)
  else:
    sock.bind(path)
  os.chmod(path, 0o600)
  sock.listen(128)
  return sock

def send_line(sock, obj):
  sock.sendall((json.dumps(obj) + '\n').encode())

def drop_privileges(p):
  # Called inside the sandbox's user namespace, where the sandbox's uid may be an image's own user
  # or the spec's runAsUser (bwrap --uid), mapped to the host uid the plan names; it keeps only the
  # container's capabilities, also as uid 0 there.
  from paddock_supervisor.caps import become
  become(p.get('innerUid', p['uid']), p.get('innerGid', p['gid']), p.get('capAdd') or [])

def drop_to_host_user(p):
  # Outside the sandbox's user namespace (a relay in its network namespace only): the host's
  # unprivileged sandbox uid, never an id the sandbox picked for itself inside (runAsUser 0).
  os.setgroups([])
  os.setresgid(p['gid'], p['gid'], p['gid'])
  os.setresuid(p['uid'], p['uid'], p['uid'])
