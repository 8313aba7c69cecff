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

# The longest request line a socket of ours reads (the supervisor's and the exec daemon's own).
MAX_REQUEST_LINE = 1 << 16
# take_request_line's answer while the line is still to come.
LINE_PENDING = object()

def take_request_line(conn, hung_up=False):
  # The JSON request line a caller writes as it connects, consumed without blocking: the line's
  # bytes (what follows it stays for the command), LINE_PENDING while more of it is to come, or
  # None when no whole line will come (closed, over MAX_REQUEST_LINE, or `hung_up`: the caller
  # closed its end after part of one, which poll would otherwise report again and again).
  try: peek = conn.recv(MAX_REQUEST_LINE, socket.MSG_PEEK | socket.MSG_DONTWAIT)
  except BlockingIOError: return LINE_PENDING
  except OSError: peek = b''
  nl = peek.find(b'\n')
  if nl < 0 and peek and len(peek) < MAX_REQUEST_LINE and not hung_up: return LINE_PENDING
  if nl < 0: return None
  conn.recv(nl + 1)
  return peek[:nl]

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
