"""The exec daemon: started inside a sandbox on its first exec, it posix_spawns commands with the request's sockets as stdio."""
import errno, gc, json, marshal, os, resource, select, signal, socket

from paddock_supervisor.fileops import file_ops
from paddock_supervisor.seccomp import install_seccomp, seccomp_program
from paddock_supervisor.sysutil import close_fds_except, drop_privileges, libc, PR_SET_DUMPABLE, PR_SET_NAME, send_line

# ---- exec daemon (runs inside the sandbox, see Supervisor.start_exec) ----
SPAWN_SIGDEF = (signal.SIGPIPE, signal.SIGINT, signal.SIGTERM, signal.SIGCHLD, signal.SIGXFSZ, signal.SIGHUP, signal.SIGQUIT)

def execd_main(p, sock, cpu_procs=None):
  # cpu_procs: on cgroup v1, a descriptor of the sandbox's cpu cgroup.procs (opened by the
  # supervisor, as root, before entering the sandbox). The daemon then stays out of that cgroup:
  # its own work (reading a request, starting the command, reporting the exit) is the platform's,
  # and under a 100m quota it used to wait for the next 100 ms period behind the commands. Only
  # the commands join it, through spares that move themselves there before any command is known.
  try:
    close_fds_except(sock.fileno(), cpu_procs)
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
    ExecDaemon(sock, p['execCwd'], cpu_procs).run()
  finally:
    os._exit(0)

def spare_main(orders, cpu_procs):
  # Forked from the exec daemon (same uid, namespaces, seccomp filter, not dumpable): prepares all
  # that does not depend on its command, joins the sandbox's cpu cgroup, then waits for that one
  # command. From the join on every cycle is charged to the sandbox's quota, and in a forked
  # Python each object touched costs a copied page too, so after it this only decodes the order
  # (marshal: a few objects, no parser), puts its sockets on stdio, changes directory and execs.
  close_fds_except(orders.fileno(), cpu_procs)
  # Its own name: the daemon is the one process of the sandbox called paddock-execd.
  libc.prctl(PR_SET_NAME, b'paddock-spare', 0, 0, 0)
  os.setsid()
  # The command's signal state, set now: an idle spare killed by one of these is reaped as one.
  for sig in SPAWN_SIGDEF: signal.signal(sig, signal.SIG_DFL)
  signal.pthread_sigmask(signal.SIG_SETMASK, ())
  # A collection would walk (and copy) the daemon's whole heap on the sandbox's quota.
  gc.disable()
  recv_fds, loads, dup2, chdir, execve = socket.recv_fds, marshal.loads, os.dup2, os.chdir, os.execve
  try: os.write(cpu_procs, b'0')
  except OSError as e: outside = e
  else: outside = None
  os.close(cpu_procs)
  # Close-on-exec: only the dup2'd copies on 0..2 reach the command, without a closerange.
  try: msg, fds, _, _ = recv_fds(orders, 1 << 20, 2, socket.MSG_CMSG_CLOEXEC)
  except OSError: os._exit(0)
  if not msg or len(fds) != 2: os._exit(0)
  exe, argv, env, cwd = loads(msg)
  io, err = fds
  try:
    # Never run a command outside its quota.
    if outside is not None: raise OSError(outside.errno, "cannot join the sandbox's cpu cgroup: %s" % outside.strerror)
    dup2(io, 0)
    dup2(io, 1)
    dup2(err, 2)
    chdir(cwd)
    execve(exe, argv, env)
  except OSError as e:
    try: os.write(2, ('paddock: cannot run %s: %s\n' % (argv[0], e)).encode())
    except OSError: pass
  os._exit(127)

def resolve_command(cmd, path):
  if '/' in cmd: return cmd
  for d in path.split(os.pathsep):
    f = os.path.join(d or '.', cmd)
    if os.access(f, os.X_OK) and not os.path.isdir(f): return f
  raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), cmd)

class ExecDaemon:
  def __init__(self, sock, cwd, cpu_procs=None):
    self.sock = sock
    self.cwd = cwd
    self.cpu_procs = cpu_procs
    self.spare = None
    self.poller = select.poll()
    self.poller.register(sock.fileno(), select.POLLIN)
    self.by_pidfd = {}
    self.by_ctl = {}

  def run(self):
    if self.cpu_procs is not None:
      try: self.spare = self.fork_spare()
      except OSError: self.spare = None
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
    # Only the control socket needs an object: stdio goes on as bare descriptors.
    ctl, io, err = socket.socket(fileno=fds[0]), fds[1], fds[2]
    argv, env = req['argv'], req['env']
    try:
      os.chdir(req['cwd'] or self.cwd)
      exe = resolve_command(argv[0], env.get('PATH', os.defpath))
      if self.cpu_procs is None:
        pid = os.posix_spawn(exe, argv, env, setsid=True, setsigdef=SPAWN_SIGDEF, setsigmask=(),
                             file_actions=[(os.POSIX_SPAWN_DUP2, io, 0), (os.POSIX_SPAWN_DUP2, io, 1),
                                           (os.POSIX_SPAWN_DUP2, err, 2)])
        pidfd = os.pidfd_open(pid)
      else:
        # An absolute cwd is passed as is: getcwd would only cost the daemon a syscall per exec.
        cwd = req['cwd'] or self.cwd
        if not cwd.startswith('/'): cwd = os.getcwd()
        pid, pidfd = self.run_in_spare((exe, argv, env, cwd), [io, err])
    except OSError as e:
      try: os.write(err, ('paddock: cannot run %s: %s\n' % (argv[0], e)).encode())
      except OSError: pass
      try: send_line(ctl, {'exit': 127, 'signal': None, 'error': str(e)})
      except OSError: pass
      ctl.close()
      os.close(io)
      os.close(err)
      return
    os.close(io)
    os.close(err)
    job = self.by_pidfd.get(pidfd) or {'pid': pid, 'pidfd': pidfd}
    job.update(ctl=ctl, buf=b'')
    try: send_line(ctl, {'started': True, 'pid': pid})
    except OSError: pass
    if pidfd not in self.by_pidfd:
      self.by_pidfd[pidfd] = job
      self.poller.register(pidfd, select.POLLIN)
    self.by_ctl[ctl.fileno()] = job
    self.poller.register(ctl.fileno(), select.POLLIN)
    # The next command's spare, now: its move into the cgroup (an RCU grace period on v1, about
    # 10 ms) is paid before that command arrives rather than when it does.
    try: self.spare = self.fork_spare()
    except OSError: self.spare = None

  # ---- spares: processes already in the sandbox's cpu cgroup, each waiting for one command ----
  def fork_spare(self):
    orders, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET | socket.SOCK_CLOEXEC)
    pid = os.fork()
    if pid == 0:
      try:
        orders.close()
        spare_main(theirs, self.cpu_procs)
      finally:
        os._exit(127)
    theirs.close()
    pidfd = os.pidfd_open(pid)
    # Reaped like a command if it dies idle (the workload may kill it: same uid).
    self.by_pidfd[pidfd] = {'pid': pid, 'pidfd': pidfd, 'ctl': None}
    self.poller.register(pidfd, select.POLLIN)
    return {'pid': pid, 'pidfd': pidfd, 'orders': orders}

  def run_in_spare(self, order, fds):
    # marshal, not JSON: cheaper to encode here and to decode in the spare, on the sandbox's quota.
    msg = marshal.dumps(order)
    for _ in range(2):
      if self.spare is None: self.spare = self.fork_spare()
      spare, self.spare = self.spare, None
      try:
        socket.send_fds(spare['orders'], [msg], fds)
        return spare['pid'], spare['pidfd']
      except OSError:
        # Gone already: its pidfd reaps it; try a fresh one.
        pass
      finally:
        spare['orders'].close()
    raise OSError(errno.ECHILD, 'no process to run the command in')

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
        close_fds_except(fds[0])
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
