"""The exec daemon: started inside a sandbox on its first exec, it posix_spawns commands with the request's sockets as stdio."""
import errno, json, os, resource, select, signal, socket

from paddock_supervisor.fileops import file_ops
from paddock_supervisor.seccomp import install_seccomp, seccomp_program
from paddock_supervisor.sysutil import drop_privileges, libc, PR_SET_DUMPABLE, PR_SET_NAME, send_line

# ---- exec daemon (runs inside the sandbox, see Supervisor.start_exec) ----
SPAWN_SIGDEF = (signal.SIGPIPE, signal.SIGINT, signal.SIGTERM, signal.SIGCHLD, signal.SIGXFSZ, signal.SIGHUP, signal.SIGQUIT)

def execd_main(p, sock):
  try:
    keep = sock.fileno()
    os.closerange(3, keep)
    os.closerange(keep + 1, 1 << 20)
    null = os.open('/dev/null', os.O_RDWR)
    for t in (0, 1, 2): os.dup2(null, t)
    if null > 2: os.close(null)
    libc.prctl(PR_SET_NAME, b'paddock-execd', 0, 0, 0)
    os.setsid()
    drop_privileges(p)
    # Not dumpable: processes of the same uid cannot ptrace it or read its memory through /proc.
    libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    resource.setrlimit(resource.RLIMIT_NOFILE, (p['nofile'], p['nofile']))
    install_seccomp(seccomp_program())
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    ExecDaemon(sock, p['execCwd']).run()
  finally:
    os._exit(0)

def resolve_command(cmd, path):
  if '/' in cmd: return cmd
  for d in path.split(os.pathsep):
    f = os.path.join(d or '.', cmd)
    if os.access(f, os.X_OK) and not os.path.isdir(f): return f
  raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), cmd)

class ExecDaemon:
  def __init__(self, sock, cwd):
    self.sock = sock
    self.cwd = cwd
    self.poller = select.poll()
    self.poller.register(sock.fileno(), select.POLLIN)
    self.by_pidfd = {}
    self.by_ctl = {}

  def run(self):
    while True:
      for fd, ev in self.poller.poll():
        if fd == self.sock.fileno():
          try: msg, fds, _, _ = socket.recv_fds(self.sock, 1 << 20, 3, socket.MSG_CMSG_CLOEXEC)
          except OSError: return
          if not msg: return
          body = json.loads(msg)
          if body.get('op') == 'file': self.file(body['req'], fds)
          else: self.start(body, fds)
        elif fd in self.by_pidfd: self.reap(self.by_pidfd[fd])
        elif fd in self.by_ctl: self.control(self.by_ctl[fd])

  def start(self, req, fds):
    if len(fds) != 3:
      for fd in fds: os.close(fd)
      return
    ctl, io, err = [socket.socket(fileno=fd) for fd in fds]
    argv, env = req['argv'], req['env']
    try:
      os.chdir(req['cwd'] or self.cwd)
      exe = resolve_command(argv[0], env.get('PATH', os.defpath))
      pid = os.posix_spawn(exe, argv, env, setsid=True, setsigdef=SPAWN_SIGDEF, setsigmask=(),
                           file_actions=[(os.POSIX_SPAWN_DUP2, io.fileno(), 0), (os.POSIX_SPAWN_DUP2, io.fileno(), 1),
                                         (os.POSIX_SPAWN_DUP2, err.fileno(), 2)])
    except OSError as e:
      try: err.sendall(('paddock: cannot run %s: %s\n' % (argv[0], e)).encode())
      except OSError: pass
      try: send_line(ctl, {'exit': 127, 'signal': None, 'error': str(e)})
      except OSError: pass
      for s in (ctl, io, err): s.close()
      return
    io.close()
    err.close()
    job = {'pid': pid, 'ctl': ctl, 'buf': b'', 'pidfd': os.pidfd_open(pid)}
    try: send_line(ctl, {'started': True, 'pid': pid})
    except OSError: pass
    self.by_pidfd[job['pidfd']] = job
    self.poller.register(job['pidfd'], select.POLLIN)
    self.by_ctl[ctl.fileno()] = job
    self.poller.register(ctl.fileno(), select.POLLIN)

  def file(self, req, fds):
    # File requests run in a fork of the daemon: already confined, so a read or write costs a
    # fork of this small process instead of three cgroup moves and seven setns calls.
    if len(fds) != 1:
      for fd in fds: os.close(fd)
      return
    pid = os.fork()
    if pid == 0:
      try:
        # Only the request's socket stays open: the daemon's channel and other commands' sockets
        # must not outlive the daemon in this child.
        os.closerange(3, fds[0])
        os.closerange(fds[0] + 1, 1 << 20)
        os.chdir(self.cwd)
        file_ops(socket.socket(fileno=fds[0]), req)
      finally:
        os._exit(0)
    os.close(fds[0])
    job = {'pid': pid, 'ctl': None, 'pidfd': os.pidfd_open(pid)}
    self.by_pidfd[job['pidfd']] = job
    self.poller.register(job['pidfd'], select.POLLIN)

  def control(self, job):
    ctl = job['ctl']
    try: data = ctl.recv(4096)
    except OSError: data = b''
    if not data:
      # The caller went away: the command goes too, as with the forked handler.
      try: os.killpg(job['pid'], signal.SIGKILL)
      except OSError: pass
      self.poller.unregister(ctl.fileno())
      del self.by_ctl[ctl.fileno()]
      return
    job['buf'] += data
    while b'\n' in job['buf']:
      line, job['buf'] = job['buf'].split(b'\n', 1)
      try: msg = json.loads(line)
      except ValueError: continue
      if 'kill' in msg:
        try: os.killpg(job['pid'], getattr(signal, str(msg['kill']), signal.SIGKILL))
        except OSError: pass

  def reap(self, job):
    _, status = os.waitpid(job['pid'], 0)
    self.poller.unregister(job['pidfd'])
    del self.by_pidfd[job['pidfd']]
    os.close(job['pidfd'])
    ctl = job['ctl']
    if ctl is None: return
    if ctl.fileno() in self.by_ctl:
      self.poller.unregister(ctl.fileno())
      del self.by_ctl[ctl.fileno()]
    if os.WIFSIGNALED(status): res = {'exit': None, 'signal': signal.Signals(os.WTERMSIG(status)).name}
    else: res = {'exit': os.WEXITSTATUS(status), 'signal': None}
    try: send_line(ctl, res)
    except OSError: pass
    ctl.close()
