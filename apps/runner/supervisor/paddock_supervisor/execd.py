"""The exec daemon: started inside a sandbox on its first exec, it posix_spawns commands with the request's sockets as stdio
(on cgroup v1 through its spawner, which sits in the sandbox's cpu cgroup)."""
import array, collections, errno, gc, json, marshal, mmap, os, resource, select, signal, socket, time

from paddock_supervisor.fileops import file_ops
from paddock_supervisor.seccomp import install_seccomp, seccomp_program
from paddock_supervisor.sysutil import (
  close_fds_except, drop_privileges, libc, send_line, take_request_line, LINE_PENDING, PR_SET_DUMPABLE, PR_SET_NAME,
)

# ---- exec daemon (runs inside the sandbox, see Supervisor.start_exec) ----
# A daemon idle this long after it started warms its exec path up (ExecDaemon.warm_up).
WARM_AFTER_IDLE_MS = 20
# Under /proc/self/fd: a directory in every sandbox (procfs), so never a command that runs.
WARM_UP_EXE = '/proc/self/fd/paddock-warm-up'
# Looked up on PATH by the warm-up; a name no command has (a sandbox whose image has one only
# makes the warm-up find it: nothing is run).
WARM_UP_NAME = 'paddock-warm-up.invalid'
# How long an exec waits for room in a busy spawner's order queue.
ORDER_WAIT_MS = 5000
FD_BYTES = array.array('i').itemsize
# The largest request (or order) a message may carry: argv and env of one command.
MAX_MESSAGE = 1 << 20
# The spawner's replies are a kind, a pid and a status, or an error's text.
MAX_REPLY = 1 << 16
# A unary command's output is relayed in pieces of at most this many bytes (see ExecDaemon.run_unary):
# received into one buffer of the daemon's (message_buffer), resident only as far as pieces reach.
RELAY_CHUNK = 1 << 18
# How long a unary command's output is still relayed after it exited: a background process it
# left may hold its stdout open for ever (the streaming path's caller cuts at the same mark).
CUT_AFTER_EXIT_S = 1.0
SPAWN_SIGDEF = (signal.SIGPIPE, signal.SIGINT, signal.SIGTERM, signal.SIGCHLD, signal.SIGXFSZ, signal.SIGHUP, signal.SIGQUIT)

def execd_main(p, sock, cpu_procs=None, listener=None):
  # cpu_procs: on cgroup v1, a descriptor of the sandbox's cpu cgroup.procs (opened by the
  # supervisor, as root, before entering the sandbox). The daemon then stays out of that cgroup:
  # its own work (reading a request, starting the command, reporting the exit) is the platform's,
  # and under a 100m quota it used to wait for the next 100 ms period behind the commands. Only
  # the commands are born in it, spawned by a process of the daemon's that moved itself there once.
  try:
    close_fds_except(sock.fileno(), cpu_procs, listener.fileno() if listener else None)
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
    # The supervisor's heap, shared with it copy-on-write: a full collection here would walk it and
    # copy every page it touched, for objects this daemon never frees.
    gc.freeze()
    ExecDaemon(sock, p['execCwd'], cpu_procs, listener).run()
  finally:
    os._exit(0)

def spawner_main(orders, cpu_procs):
  # Forked once from the exec daemon (same uid, namespaces, seccomp filter, not dumpable), it moves
  # itself into the sandbox's cpu cgroup, then posix_spawns each command the daemon orders: a
  # vfork and an execve, born in that cgroup. A forked spare per command cost a copy of the
  # daemon's page tables, a copied page for each one either side touched next, and the teardown of
  # the whole Python image at its execve: about three times this, most of it on the sandbox's
  # quota. What it does after the join is billed to the sandbox (as the spare's was): decode the
  # order (marshal: a few objects, no parser), spawn, tell the daemon the pid, and later the status.
  close_fds_except(orders.fileno(), cpu_procs)
  # Its own name: the daemon is the one process of the sandbox called paddock-execd.
  libc.prctl(PR_SET_NAME, b'paddock-spawner', 0, 0, 0)
  os.setsid()
  # Killed by any of these rather than ignoring it (the daemon reaps it and starts another), but
  # for SIGPIPE: a caller that went away must not take the statuses of every other command with
  # it. The commands get all of them at their default (setsigdef).
  for sig in SPAWN_SIGDEF: signal.signal(sig, signal.SIG_IGN if sig == signal.SIGPIPE else signal.SIG_DFL)
  # Long-lived now: a collection of the daemon's inherited heap would only copy its pages here.
  gc.freeze()
  try: os.write(cpu_procs, b'0')
  except OSError as e: outside = e
  else: outside = None
  os.close(cpu_procs)
  Spawner(orders, outside).run()

class Spawner:
  def __init__(self, orders, outside):
    self.orders = orders
    self.outside = outside
    self.poller = select.poll()
    self.poller.register(orders.fileno(), select.POLLIN)
    self.children = {}
    self.inbox = message_buffer(MAX_MESSAGE)

  def run(self):
    loads, orders = marshal.loads, self.orders.fileno()
    while True:
      for fd, _ in self.poller.poll():
        if fd != orders:
          self.reap(fd)
          continue
        # Close-on-exec: only the copies posix_spawn puts on 0..2 reach the command.
        try: msg, fds = recv_fds(self.orders, self.inbox, 2)
        except OSError: return
        # The daemon is gone: its commands run on (their sandbox's init reaps them).
        if not msg: return
        if len(fds) != 2:
          for f in fds: os.close(f)
          self.orders.send(marshal.dumps(('e', 'an order without its stdio')))
          continue
        self.spawn(loads(msg), fds)

  def spawn(self, order, fds):
    exe, argv, env, cwd = order
    io, err = fds
    try:
      # Never run a command outside its quota.
      if self.outside is not None: raise OSError(self.outside.errno, "cannot join the sandbox's cpu cgroup: %s" % self.outside.strerror)
      os.chdir(cwd)
      pid = os.posix_spawn(exe, argv, env, setsid=True, setsigdef=SPAWN_SIGDEF, setsigmask=(),
                           file_actions=[(os.POSIX_SPAWN_DUP2, io, 0), (os.POSIX_SPAWN_DUP2, io, 1),
                                         (os.POSIX_SPAWN_DUP2, err, 2)])
      pidfd = os.pidfd_open(pid)
    except OSError as e:
      try: os.write(err, ('paddock: cannot run %s: %s\n' % (argv[0], e)).encode())
      except OSError: pass
      reply = ('e', str(e))
    else:
      self.children[pidfd] = pid
      self.poller.register(pidfd, select.POLLIN)
      reply = ('s', pid)
    finally:
      os.close(io)
      os.close(err)
    self.orders.send(marshal.dumps(reply))

  def reap(self, pidfd):
    pid = self.children.pop(pidfd)
    self.poller.unregister(pidfd)
    _, status = os.waitpid(pid, 0)
    os.close(pidfd)
    self.orders.send(marshal.dumps(('x', pid, status)))

def message_buffer(size):
  # One receive buffer per process, kept: recvmsg(1 MiB) allocated (mmap) a fresh megabyte per
  # message, faulted its first page in, then shrank it (mremap) and later unmapped it (munmap: a
  # TLB flush on every CPU the process's memory was live on) - on each request and each order.
  # Anonymous and mapped lazily, so only the pages a message reached are ever resident.
  buf = mmap.mmap(-1, size)
  return buf, memoryview(buf)

def recv_fds(sock, inbox, maxfds):
  # socket.recv_fds drops its flags argument (CPython 3.11): descriptors it receives are
  # inheritable, and a command spawned after it got copies of its own stdio (and, on cgroup v2, of
  # its control socket) as fds 3 and up. These arrive close-on-exec. The message is returned as a
  # view of `inbox` (see message_buffer), valid until its next message.
  buf, view = inbox
  n, anc, _, _ = sock.recvmsg_into([buf], socket.CMSG_LEN(maxfds * FD_BYTES), socket.MSG_CMSG_CLOEXEC)
  fds = array.array('i')
  for level, kind, data in anc:
    if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS: fds.frombytes(data[:len(data) - len(data) % FD_BYTES])
  return view[:n], list(fds)

def resolve_command(cmd, path):
  if '/' in cmd: return cmd
  for d in path.split(os.pathsep):
    # As os.path.join(d or '.', cmd) for a cmd without '/', at a fraction of its cost per entry.
    d = d or '.'
    f = d + cmd if d.endswith('/') else d + '/' + cmd
    if os.access(f, os.X_OK) and not os.path.isdir(f): return f
  raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), cmd)

def unary_request(req):
  # A request line on the daemon's own socket, from the runner (root on the host, but nothing it
  # says is used beyond this sandbox): a command of the primary container without stdin, nothing
  # else. Anything other is answered EUNARY before it runs, and the runner asks the supervisor.
  if not isinstance(req, dict) or req.get('op') != 'run' or req.get('container'): return None
  argv, env, cwd = req.get('argv'), req.get('env'), req.get('cwd')
  if not (isinstance(argv, list) and argv and all(isinstance(a, str) for a in argv)): return None
  if not (isinstance(env, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in env.items())): return None
  if cwd is not None and not isinstance(cwd, str): return None
  return {'op': 'run', 'argv': argv, 'env': env, 'cwd': cwd}

class ExecDaemon:
  def __init__(self, sock, cwd, cpu_procs=None, listener=None):
    self.sock = sock
    self.cwd = cwd
    self.cpu_procs = cpu_procs
    self.spawner = None
    self.poller = select.poll()
    self.poller.register(sock.fileno(), select.POLLIN)
    self.by_pidfd = {}
    self.by_ctl = {}
    # Unary commands' output streams (the daemon's ends), and those whose command has exited.
    self.by_stream = {}
    self.cuts = {}
    # Commands the spawner runs: ordered, not yet answered (its replies come in order), then by pid.
    self.ordered = collections.deque()
    self.by_pid = {}
    self.inbox = message_buffer(MAX_MESSAGE)
    self.replies = message_buffer(MAX_REPLY)
    self.relayed = message_buffer(RELAY_CHUNK)
    # The daemon's own socket (see accept): connections whose request line is still to come, and
    # a descriptor given up to refuse one when the sandbox's open-files limit is reached.
    self.listener = listener
    self.headers = {}
    self.spare = None
    if listener is not None:
      listener.setblocking(False)
      self.poller.register(listener.fileno(), select.POLLIN)
      self.spare = os.open('/dev/null', os.O_RDONLY | os.O_CLOEXEC)

  def run(self):
    if self.cpu_procs is not None: self.start_spawner()
    # Only a spawner to warm up, and only once.
    self.cold = self.cpu_procs is not None
    while True:
      ready = self.poller.poll(self.poll_timeout())
      if not ready and self.cold: self.warm_up()
      for fd, ev in ready:
        if fd == self.sock.fileno():
          if not self.receive(self.sock): return
        elif self.spawner is not None and fd == self.spawner['orders'].fileno(): self.from_spawner()
        elif fd in self.by_pidfd: self.reap(self.by_pidfd[fd])
        elif fd in self.by_ctl: self.control(self.by_ctl[fd])
        elif fd in self.by_stream: self.relay(fd)
        elif self.listener is not None and fd == self.listener.fileno(): self.accept()
        elif fd in self.headers: self.read_header(fd, bool(ev & (select.POLLHUP | select.POLLERR)))
      if self.cuts: self.cut_overdue()

  def poll_timeout(self):
    # Milliseconds until the first of: the warm-up of a cold daemon, the cut of an exited unary
    # command's output; None (for ever) when neither is pending.
    t = WARM_AFTER_IDLE_MS if self.cold else None
    if self.cuts:
      left = max(0, int((min(at for at, _ in self.cuts.values()) - time.monotonic()) * 1000) + 1)
      t = left if t is None else min(t, left)
    return t

  def receive(self, sock):
    # One request of the supervisor's (or warm_up's); False once the supervisor is gone.
    try: msg, fds = recv_fds(sock, self.inbox, 3)
    except OSError: return False
    if not msg: return False
    body = json.loads(msg.tobytes())
    op = body.get('op')
    if op == 'file': self.file(body['req'], fds)
    elif op == 'run': self.run_unary(body, fds)
    else: self.start(body, fds)
    return True

  # ---- the daemon's own socket ----
  # The runner's unary execs come here straight, not through the supervisor: the supervisor binds
  # this socket (exec.sock in the sandbox's directory, on the host: nothing inside the sandbox can
  # reach it) before it starts the daemon, hands it over, and keeps no copy. It stays the gate:
  # it renames the socket away while the sandbox is paused and removes it once the sandbox stops,
  # so a connect is refused and the runner asks the supervisor, which answers as before. On the
  # way through the supervisor, each exec woke one more process (a Python one) and cost it an
  # accept, a JSON decode and encode and a descriptor passed on.
  def accept(self):
    while True:
      try: conn, _ = self.listener.accept()
      except (BlockingIOError, InterruptedError): return
      except OSError as e:
        if e.errno not in (errno.EMFILE, errno.ENFILE): return
        # Out of descriptors (the limit is the sandbox's, shared with its commands' streams): the
        # connection would wait in the backlog, and wake this loop again at once. The spare one
        # is given up for as long as it takes to refuse it (the runner then asks the supervisor).
        self.refuse_one()
        return
      self.headers[conn.fileno()] = conn
      if not self.read_header(conn.fileno()): self.poller.register(conn.fileno(), select.POLLIN)

  def refuse_one(self):
    if self.spare is None: return
    os.close(self.spare)
    self.spare = None
    try:
      conn, _ = self.listener.accept()
      self.refuse(conn, 'the exec daemon has no descriptor left')
    except OSError: pass
    try: self.spare = os.open('/dev/null', os.O_RDONLY | os.O_CLOEXEC)
    except OSError: pass

  def refuse(self, conn, why='not a request the exec daemon\'s socket takes'):
    try: send_line(conn, {'ok': False, 'errno': 'EUNARY', 'message': why})
    except OSError: pass
    conn.close()

  def read_header(self, fd, hung_up=False):
    # True once the connection is dealt with, False while its request line is still to come. The
    # runner writes it as it connects: it is mostly here already, and costs no turn of the loop.
    # `hung_up`: see take_request_line.
    conn = self.headers[fd]
    line = take_request_line(conn, hung_up)
    if line is LINE_PENDING: return False
    del self.headers[fd]
    try: self.poller.unregister(fd)
    except KeyError: pass
    try: req = unary_request(json.loads(line)) if line is not None else None
    except ValueError: req = None
    if req is None: self.refuse(conn)
    else: self.run_unary(req, [conn.detach()])
    return True

  def run_unary(self, req, fds):
    # A command without stdin whose caller wants its output whole (the runner's unary exec) comes
    # on one connection instead of three: the caller connects, and the supervisor accepts, once
    # instead of three times (a third of the runner's CPU per exec was its three connects). The
    # command's stdio are socket pairs of this daemon's; what it writes is relayed on the control
    # socket as frames (a kind byte, a 4-byte big-endian length, the bytes): b'o' stdout, b'e'
    # stderr, and last b'x', the exit status as JSON, once the command has exited and both its
    # streams are closed (or CUT_AFTER_EXIT_S after its exit). Its stdin is empty (closed at once).
    # The relay copies each byte once more than the streaming path, in pieces, so the daemon holds
    # no more than one piece of a command's output at a time, whatever the caller's cap.
    if len(fds) != 1:
      for fd in fds: os.close(fd)
      return
    try:
      io_ours, io_theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
      try: err_ours, err_theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
      except OSError:
        io_ours.close()
        io_theirs.close()
        raise
    except OSError:
      # Out of descriptors (the sandbox's open-files limit, which its commands share): refused
      # before anything ran, as the runner can then ask again the three-connection way.
      self.refuse(socket.socket(socket.AF_UNIX, socket.SOCK_STREAM, 0, fds[0]), 'the exec daemon has no descriptor left')
      return
    io_ours.shutdown(socket.SHUT_WR)
    run = {'streams': 2, 'exit': None}
    for s, kind in ((io_ours, b'o'), (err_ours, b'e')):
      self.by_stream[s.fileno()] = (run, kind, s)
      self.poller.register(s.fileno(), select.POLLIN)
    # The pairs' far ends become the command's 0..2 (start() closes them once ordered).
    self.start(req, [fds[0], io_theirs.detach(), err_theirs.detach()], run)

  def relay(self, fd):
    run, kind, s = self.by_stream[fd]
    buf, view = self.relayed
    try: n = s.recv_into(buf)
    except OSError: n = 0
    if n:
      job = run.get('job')
      if job is not None and not self.send_frame(job, kind, view[:n]):
        # The caller is gone: nothing more to relay, and its end is written to no one.
        self.close_streams(run)
        self.unary_done(run)
      return
    self.close_stream(fd)
    self.unary_done(run)

  def close_stream(self, fd):
    run, _, s = self.by_stream.pop(fd)
    self.poller.unregister(fd)
    s.close()
    run['streams'] -= 1

  def close_streams(self, run):
    for fd in [fd for fd, v in self.by_stream.items() if v[0] is run]: self.close_stream(fd)

  def send_frame(self, job, kind, data):
    # Blocking: the runner reads its control socket as it comes. False once the caller is gone.
    # Header and bytes in one call, without joining them into a copy first.
    parts = [kind + len(data).to_bytes(4, 'big'), data]
    try:
      while parts:
        sent = job['ctl'].sendmsg(parts)
        while parts and sent >= len(parts[0]):
          sent -= len(parts[0])
          parts.pop(0)
        if parts: parts[0] = parts[0][sent:]
      return True
    except OSError:
      return False

  def unary_done(self, run):
    # The last frame, once the command has exited and its streams are closed (or cut).
    job = run.get('job')
    if job is None or run['exit'] is None or run['streams'] > 0: return
    self.cuts.pop(id(run), None)
    self.send_frame(job, b'x', json.dumps(run['exit']).encode())
    self.unregister_ctl(job['ctl'])
    job['ctl'].close()

  def cut_overdue(self):
    now = time.monotonic()
    for key, (at, run) in list(self.cuts.items()):
      if at > now: continue
      del self.cuts[key]
      self.close_streams(run)
      self.unary_done(run)

  def unregister_ctl(self, ctl):
    if ctl.fileno() in self.by_ctl:
      self.poller.unregister(ctl.fileno())
      del self.by_ctl[ctl.fileno()]

  def exited(self, job, code, sig, error=None):
    # The command's end, as its caller learns it: one line on its control socket, or for a unary
    # command the b'x' frame once its output is relayed.
    ctl, run = job['ctl'], job.get('run')
    if run is not None:
      run['exit'] = {'exit': code, 'signal': sig, **({'error': error} if error else {})}
      if run['streams'] > 0: self.cuts[id(run)] = (time.monotonic() + CUT_AFTER_EXIT_S, run)
      self.unary_done(run)
      return
    self.unregister_ctl(ctl)
    try:
      if error: send_line(ctl, {'exit': code, 'signal': sig, 'error': error})
      # The usual report, written out as started() does: a number, or a signal's name (an identifier).
      elif sig: ctl.sendall(b'{"exit": null, "signal": "%s"}\n' % sig.encode())
      else: ctl.sendall(b'{"exit": %d, "signal": null}\n' % code)
    except OSError: pass
    ctl.close()

  def start(self, req, fds, run=None):
    if len(fds) != 3:
      for fd in fds: os.close(fd)
      return
    # Only the control socket needs an object: stdio goes on as bare descriptors.
    # Family and type given: without them the socket module asks the kernel (three syscalls).
    ctl, io, err = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM, 0, fds[0]), fds[1], fds[2]
    job = {'pid': None, 'ctl': ctl, 'buf': b'', 'run': run}
    if run is not None: run['job'] = job
    argv, env = req['argv'], req['env']
    # A command looked up on PATH warms the path up as well as warm_up would. The runner's prime
    # of a warm pool's sandbox names a path that cannot run: the lookup is still to warm then.
    if argv and '/' not in argv[0]: self.cold = False
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
        self.order((exe, argv, env, cwd), [io, err])
    except OSError as e:
      try: os.write(err, ('paddock: cannot run %s: %s\n' % (argv[0], e)).encode())
      except OSError: pass
      os.close(io)
      os.close(err)
      self.exited(job, 127, None, str(e))
      return
    os.close(io)
    os.close(err)
    if self.cpu_procs is not None:
      # Answered once the spawner says which pid it is (from_spawner).
      self.ordered.append(job)
      return
    job['pid'], job['pidfd'] = pid, pidfd
    self.by_pidfd[pidfd] = job
    self.poller.register(pidfd, select.POLLIN)
    self.started(job)

  def warm_up(self):
    # Idle since it started (a warm pool's sandbox, primed by a file request): the exec path is run
    # once through, up to a spawn that fails, so that the first command does not pay for it. In a
    # process forked from the supervisor, first use is what an exec costs most: each page the
    # daemon and its spawner touch is copied then (about 300 faults, 1 ms of CPU on the first
    # exec against 0.4 ms on later ones). Nothing runs: the path is not executable anywhere.
    # The request arrives as the supervisor's do (a message and a descriptor on a socket,
    # received and decoded by the same code), and a command name is looked up on PATH: the
    # receive buffer, the JSON decoder and the lookup were the first exec's largest cost when the
    # warm-up skipped them (strace: 7 ms from its receipt to its order, against 0.6 ms after). It
    # is a unary request, the API's exec without stdin: its relay of the (empty) output runs too,
    # as the failed spawn's streams close.
    ctl, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    tx, rx = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    try:
      msg = json.dumps({'op': 'run', 'argv': [WARM_UP_EXE], 'env': {'PATH': os.defpath}, 'cwd': None}).encode()
      socket.send_fds(tx, [msg], [theirs.fileno()])
      self.receive(rx)
    finally:
      for sock in (ctl, theirs, tx, rx): sock.close()
    try: resolve_command(WARM_UP_NAME, os.defpath)
    except OSError: pass
    # The answers of a command that started and exited, written to a control socket of its own:
    # the first real command's most copied pages after the order (about 20 faults).
    # Both kinds: a line for the three-connection path, an end frame for a unary command.
    for unary in (False, True):
      ctl, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
      try:
        job = {'pid': 0, 'ctl': ctl, 'buf': b'', 'run': {'streams': 0, 'exit': None} if unary else None}
        if unary: job['run']['job'] = job
        self.started(job)
        self.report(job, 0)
      finally:
        for sock in (ctl, theirs): sock.close()
    self.cold = False

  def started(self, job):
    ctl = job['ctl']
    # Written out, not json.dumps'd: the same line, without the encoder's work on every exec. A
    # unary command's caller learns only its output and its end.
    if job.get('run') is None:
      try: ctl.sendall(b'{"started": true, "pid": %d}\n' % job['pid'])
      except OSError: pass
    self.by_ctl[ctl.fileno()] = job
    self.poller.register(ctl.fileno(), select.POLLIN)

  # ---- the spawner: one process in the sandbox's cpu cgroup that posix_spawns the commands ----
  def start_spawner(self):
    # Its move into the cgroup (an RCU grace period on v1, about 10 ms) is paid once, when the
    # daemon starts or the workload has killed the one before, not by each command.
    orders, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET | socket.SOCK_CLOEXEC)
    try: pid = os.fork()
    except OSError:
      orders.close()
      theirs.close()
      return
    if pid == 0:
      try:
        orders.close()
        spawner_main(theirs, self.cpu_procs)
      finally:
        os._exit(127)
    theirs.close()
    orders.setblocking(False)
    pidfd = os.pidfd_open(pid)
    self.spawner = {'pid': pid, 'pidfd': pidfd, 'orders': orders}
    self.by_pidfd[pidfd] = {'pid': pid, 'pidfd': pidfd, 'ctl': None, 'spawner': True}
    self.poller.register(pidfd, select.POLLIN)
    self.poller.register(orders.fileno(), select.POLLIN)

  def order(self, order, fds):
    # marshal, not JSON: cheaper to encode here and to decode in the spawner, on the sandbox's quota.
    if self.spawner is None: self.start_spawner()
    if self.spawner is None: raise OSError(errno.ECHILD, 'no process to run the command in')
    orders, msg = self.spawner['orders'], [marshal.dumps(order)]
    try:
      try: socket.send_fds(orders, msg, fds)
      except BlockingIOError:
        # A spawner behind on its orders (throttled by its quota): waited for, but never forever,
        # as it may itself wait for this daemon to read its replies.
        room = select.poll()
        room.register(orders.fileno(), select.POLLOUT)
        if not room.poll(ORDER_WAIT_MS): raise
        socket.send_fds(orders, msg, fds)
    except OSError as e:
      # Gone already (its pidfd reaps it, and a fresh one is started), or stuck.
      raise OSError(errno.ECHILD, 'no process to run the command in: %s' % e)

  def from_spawner(self, drain=False):
    # One reply per wakeup (poll is level-triggered: another one wakes it again at once), so the
    # usual read ends without the BlockingIOError that draining would raise; only a spawner that
    # is gone is drained.
    orders = self.spawner['orders']
    buf, view = self.replies
    while True:
      try: n = orders.recv_into(buf)
      except BlockingIOError: return
      except OSError: n = 0
      # Its end closes only as it exits: its pidfd reaps it.
      if not n:
        try: self.poller.unregister(orders.fileno())
        except KeyError: pass
        return
      self.spawner_said(view[:n])
      if not drain: return

  def spawner_said(self, msg):
    # From inside the sandbox: anything but a well-formed reply ends this spawner.
    try:
      reply = marshal.loads(msg)
      kind = reply[0]
      if kind == 's' or kind == 'e':
        job = self.ordered.popleft()
        if kind == 'e':
          self.exited(job, 127, None, str(reply[1]))
          return
        pid = int(reply[1])
        job['pid'] = pid
        self.by_pid[pid] = job
        self.started(job)
      elif kind == 'x':
        self.report(self.by_pid.pop(int(reply[1])), int(reply[2]))
      else: raise ValueError(kind)
    except (ValueError, EOFError, TypeError, IndexError, KeyError):
      try: os.kill(self.spawner['pid'], signal.SIGKILL)
      except OSError: pass

  def spawner_gone(self, status):
    # What it said before it went is still to be read.
    self.from_spawner(drain=True)
    orders = self.spawner['orders']
    try: self.poller.unregister(orders.fileno())
    except KeyError: pass
    orders.close()
    self.spawner = None
    # Its commands' statuses went with it: each running one is killed and reported so, and an order
    # it never answered fails, rather than leaving their callers waiting.
    lost = 'the process that ran the command went away'
    ordered = list(self.ordered)
    self.ordered.clear()
    for job in ordered: self.exited(job, 127, None, lost)
    for pid, job in list(self.by_pid.items()):
      try: os.killpg(pid, signal.SIGKILL)
      except OSError: pass
      self.report(job, signal.SIGKILL, lost)
    self.by_pid.clear()
    # Killed (the workload may: same uid): the next command's spawner now, so that its join is not
    # that command's wait. One that ended by itself is started again only by the next order: a
    # spawner that cannot start must not fork in a loop.
    if os.WIFSIGNALED(status): self.start_spawner()

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
      # The caller went away: the command goes too, as with the forked handler; a unary command's
      # output has nowhere to go (its end, when it comes, is then written to no one).
      try: os.killpg(job['pid'], signal.SIGKILL)
      except OSError: pass
      self.unregister_ctl(ctl)
      if job.get('run') is not None: self.close_streams(job['run'])
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
    if job.get('spawner'): self.spawner_gone(status)
    elif job['ctl'] is not None: self.report(job, status)

  def report(self, job, status, error=None):
    # status: a wait status, as waitpid gives it.
    if os.WIFSIGNALED(status): code, sig = None, signal.Signals(os.WTERMSIG(status)).name
    else: code, sig = os.WEXITSTATUS(status), None
    self.exited(job, code, sig, error)
