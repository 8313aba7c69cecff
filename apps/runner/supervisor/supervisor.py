# The per-sandbox supervisor, a small Python 3 program (stdlib only) that the backend copies into
# its state directory and runs detached (own session) for every sandbox.
#
# Why a separate process, and why Python:
# - Sandboxes must outlive a runner restart, and nothing may outlive its lifetime. The supervisor
#   is the sandbox's parent, enforces the deadline, records the exit and kills the whole cgroup,
#   whether or not the runner is alive. If the supervisor itself dies, bwrap dies with it
#   (PR_SET_PDEATHSIG + `--die-with-parent`): the sandbox fails closed.
# - It captures the main process's stdout/stderr into a framed, size-capped log on the host side,
#   so a sandbox can neither exceed the cap nor tamper with the log.
# - Exec and file requests arrive on a Unix socket. Commands without a terminal are handed, with
#   the request's sockets (SCM_RIGHTS), to an exec daemon started inside the sandbox on first use
#   (its namespaces, cgroups, uid, no new privileges, the same seccomp filter): it posix_spawns
#   the command with the sockets as stdio (zero copy, kernel backpressure), about 3 ms per exec
#   here. Once it runs, the runner's unary execs (no stdin, output wanted whole) go to the daemon's
#   own socket (exec.sock), which this process binds, hands over and gates (ExecDaemonSocket).
#   Terminal sessions and file requests fork a handler that joins the sandbox's cgroups,
#   enters its namespaces (setns) and drops to the sandbox uid the same way (about 9 ms). Neither
#   needs a helper binary inside the image.
# - Python is on every Debian host and has setns/prctl/mount through ctypes (a shell could not frame
#   logs). Its start-up (tens of ms) is paid once: a warm zygote forks one supervisor per sandbox.
#
# Log framing: each record is a 16-byte header `<u32 length, u8 stream (0 out, 1 err), 3 pad,
# f64 unix seconds>` followed by `length` bytes. Offsets exposed to clients count payload bytes only.

import os, sys, gc, json, socket, select, signal, struct, time, errno, ctypes, base64, resource, fcntl, termios, tarfile

from paddock_supervisor import plan as plan_schema
from paddock_supervisor.execd import execd_main
from paddock_supervisor.fileops import file_ops
from paddock_supervisor.launch import exec_bwrap, launcher_pipes
from paddock_supervisor.pod import FramedLog, Pod
from paddock_supervisor.probe import StartupProbe
from paddock_supervisor.relay import relay_handler
from paddock_supervisor.seccomp import install_seccomp, seccomp_program
from paddock_supervisor.sysutil import (
  close_fds_except, drop_privileges, high_fd, libc, listen_unix, read_pids, reset_signals, send_line, take_request_line, write_file,
  LINE_PENDING, MAX_REQUEST_LINE, PR_SET_CHILD_SUBREAPER, PR_SET_PDEATHSIG,
)

MS_NOSUID, MS_NODEV, MNT_DETACH = 2, 4, 2
HEADER = struct.Struct('<IBxxxd')
NS_ORDER = ['cgroup', 'ipc', 'uts', 'net', 'pid', 'mnt', 'user']
CLONE_NEWNET = 0x40000000


class ExecDaemonSocket:
  """The exec daemon's own socket, `exec.sock` in the sandbox's directory (on the host), on which
  the runner's unary execs reach the daemon without this process in between. It is bound here
  (as root, 0600: only the runner can connect), handed to the daemon as it starts, and no copy is
  kept: once the daemon is gone (the workload may kill it, same uid), a connect is refused and the
  runner asks this supervisor, whose next exec starts a new daemon with a new socket. The path is
  the gate this supervisor keeps, as it refuses requests on its own socket: a paused sandbox has
  it renamed away (a connect finds nothing, and the request comes here to be refused as not
  running), and one that stops or exits has it removed."""

  NAME, NEW, PAUSED = 'exec.sock', 'exec.sock.new', 'exec.sock.paused'

  def __init__(self, directory):
    self.dir = directory

  def at(self, fn):
    # Relative to the directory's descriptor: a deep state directory outgrows sockaddr_un's 108
    # bytes, and these names stay short.
    dfd = os.open(self.dir, os.O_RDONLY | os.O_DIRECTORY)
    try: fn(dfd)
    except FileNotFoundError: pass
    finally: os.close(dfd)

  def unlink(self, name):
    self.at(lambda d: os.unlink(name, dir_fd=d))

  def rename(self, src, dst):
    self.at(lambda d: os.rename(src, dst, src_dir_fd=d, dst_dir_fd=d))

  def bind(self):
    # Under a name of its own until the daemon runs (publish): a connect never reaches a socket
    # that nobody will accept on.
    self.unlink(self.NEW)
    return listen_unix(self.dir, self.NEW)

  def publish(self, listener):
    # Over the socket of a daemon that is gone, if any (rename is atomic).
    self.rename(self.NEW, self.NAME)
    listener.close()

  def discard(self, listener):
    listener.close()
    self.unlink(self.NEW)

  def close_gate(self):
    self.rename(self.NAME, self.PAUSED)

  def open_gate(self):
    self.rename(self.PAUSED, self.NAME)

  def remove(self):
    for name in (self.NAME, self.PAUSED, self.NEW): self.unlink(name)

class Supervisor:
  def __init__(self, plan):
    self.p = plan
    self.dir = plan['dir']
    self.disk = os.path.join(self.dir, 'disk')
    self.events = open(os.path.join(self.dir, 'events.jsonl'), 'ab+', buffering=0)
    self.events.seek(0)
    self.seq = sum(1 for _ in self.events)
    self.stdout_ok = True
    try: os.set_blocking(1, False)
    except OSError: self.stdout_ok = False
    self.running = False
    self.init_pid = None
    self.init_seen_at = None
    self.main_pid = None
    self.info = b''
    self.stop_reason = None
    self.terminating = False
    self.kill_at = None
    self.term_at = None
    self.exit_code = None
    self.bwrap_pid = None
    self.stderr_head = b''
    self.log_bytes = 0
    self.truncated = False
    self.pending = {}
    self.execs = {}
    self.handlers = set()
    # pidfd -> pid of each handler, so that its exit wakes the main loop instead of a poll timer.
    self.handler_fds = {}
    self.poller = None
    self.execd = None
    self.execd_socket = ExecDaemonSocket(self.dir)
    self.parked = None
    self.bwrap_stat = os.stat(plan['bwrapExe'])
    self.deadline = plan['deadlineMs'] / 1000.0
    self.paused_at = None
    self.held_until = None
    self.oom_before = self.oom_count()
    pod_keys = ('sidecars', 'initContainers', 'volumes', 'dirs', 'sharedLoopbackNet')
    self.pod = Pod(self) if any(plan.get(k) for k in pod_keys) else None
    self.probe = StartupProbe(plan['startupProbe'], self.spawn_probe) if plan.get('startupProbe') else None
    self.probing = False
    self.init_failure = None

  # ---- events and log ----
  def emit(self, state, reason=None, message=None, exit_code=None):
    self.seq += 1
    ev = {'seq': self.seq, 'sandboxId': self.p['sandboxId'], 'state': state, 'at': time.time()}
    if reason: ev['reason'] = reason
    if message: ev['message'] = message
    if exit_code is not None: ev['exitCode'] = exit_code
    line = (json.dumps(ev) + '\n').encode()
    self.events.write(line)
    if self.stdout_ok:
      try: os.write(1, line)
      except BlockingIOError: pass
      except OSError: self.stdout_ok = False

  def log(self, stream, data):
    self.logw.write(stream, data)

  # ---- cgroups ----
  def oom_count(self):
    f = self.p.get('oomFile')
    if not f: return 0
    try:
      with open(f) as fh:
        for line in fh:
          k, _, v = line.partition(' ')
          if k == 'oom_kill': return int(v)
    except OSError: pass
    return 0

  def box_pids(self):
    return read_pids(self.p['cgroupProcs'][0])

  def signal_box(self, sig):
    if sig == signal.SIGKILL and self.p.get('cgroupKill'):
      try: write_file(self.p['cgroupKill'], '1')
      except OSError: pass
    for pid in self.box_pids():
      # A graceful stop must reach the workload, not bwrap: bwrap dying first would take the
      # namespace down at once (die-with-parent) and defeat the grace period.
      if sig != signal.SIGKILL and pid == self.bwrap_pid: continue
      try: os.kill(pid, sig)
      except OSError: pass

  def kill_box_and_wait(self, timeout=10.0):
    end = time.time() + timeout
    if self.paused_at is not None:
      try: self.set_frozen(False)
      except OSError: pass
    while time.time() < end:
      if not self.box_pids(): return True
      self.signal_box(signal.SIGKILL)
      time.sleep(0.002)
    return not self.box_pids()

  # ---- setup ----
  def setup(self):
    p = self.p
    # Orphans of our own children (the exec daemon, once its launcher exits) come back to us to be reaped.
    libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    with open(os.path.join(self.dir, 'supervisor.pid'), 'w') as f: f.write(str(os.getpid()))
    os.makedirs(self.disk, exist_ok=True)
    opts = 'size=%d,uid=%d,gid=%d,mode=0755' % (p['diskBytes'], p['uid'], p['gid'])
    if libc.mount(b'tmpfs', self.disk.encode(), b'tmpfs', MS_NOSUID | MS_NODEV, opts.encode()) != 0:
      e = ctypes.get_errno()
      raise OSError(e, 'mount tmpfs on %s: %s' % (self.disk, os.strerror(e)))
    for sub, mode in (('workspace', 0o755), ('tmp', 0o1777)):
      d = os.path.join(self.disk, sub)
      os.mkdir(d)
      os.chown(d, p['uid'], p['gid'])
      os.chmod(d, mode)
    # Volumes, the other containers' directories and their shared network, before any file lands in them.
    if self.pod is not None: self.pod.setup(self.disk)
    if p.get('restoreArchive'): self.restore(p['restoreArchive'])
    for f in p['files']:
      target = os.path.join(self.disk, f['rel'])
      parent = os.path.dirname(target)
      os.makedirs(parent, exist_ok=True)
      with open(target, 'wb') as fh: fh.write(base64.b64decode(f['b64']))
      os.chmod(target, f.get('mode', 0o644))
      d = target
      while d != self.disk:
        os.chown(d, p['uid'], p['gid'])
        d = os.path.dirname(d)
    self.logw = FramedLog(os.path.join(self.dir, 'log'), p['logCapBytes'])
    path = os.path.join(self.dir, 'sup.sock')
    try: os.unlink(path)
    except FileNotFoundError: pass
    self.lsock = listen_unix(self.dir, 'sup.sock')
    self.lsock.setblocking(False)

  def restore(self, archive):
    # A file-system snapshot into the fresh disk, before anything runs: every file, directory,
    # symlink and mode as captured, owned by this sandbox's uid. The archive holds what a sandbox
    # wrote, so each member is checked before it is written: nothing may land, or be written
    # through a link, outside the disk. (Debian's Python 3.11.2 has no tarfile extraction filters.)
    disk = os.path.realpath(self.disk)
    uid, gid = self.p['uid'], self.p['gid']
    def inside(path):
      return os.path.commonpath([os.path.realpath(path), disk]) == disk
    dirs = []
    try:
      with tarfile.open(archive, 'r:') as tf:
        for m in tf:
          name = os.path.normpath(m.name)
          if name == '.' and m.isdir():
            dirs.append((disk, m)); continue
          if os.path.isabs(name) or name == '..' or name.startswith('../'):
            raise tarfile.TarError('%s: outside the disk' % m.name)
          if not (m.isfile() or m.isdir() or m.issym() or m.islnk()):
            raise tarfile.TarError('%s: only files, directories and links are restored' % m.name)
          target = os.path.join(disk, name)
          if not inside(os.path.dirname(target)):
            raise tarfile.TarError('%s: its directory leads outside the disk' % m.name)
          if m.islnk() and not (inside(os.path.join(disk, m.linkname)) and os.path.isfile(os.path.join(disk, m.linkname))):
            raise tarfile.TarError('%s: hard link outside the disk' % m.name)
          if os.path.lexists(target) and not (m.isdir() and os.path.isdir(target) and not os.path.islink(target)):
            if os.path.isdir(target) and not os.path.islink(target): raise tarfile.TarError('%s: replaces a directory' % m.name)
            os.unlink(target)
          m.uid, m.gid, m.uname, m.gname = uid, gid, '', ''
          if m.isdir():
            os.makedirs(target, exist_ok=True)
            dirs.append((target, m))
          else:
            tf.extract(m, disk, set_attrs=not m.issym(), numeric_owner=True)
            if m.issym(): os.lchown(target, uid, gid)
        # Directories last, deepest first: their modes may forbid the writes that filled them.
        for target, m in sorted(dirs, key=lambda d: d[0], reverse=True):
          os.chown(target, uid, gid)
          os.chmod(target, m.mode & 0o7777)
          os.utime(target, (m.mtime, m.mtime))
    except (OSError, tarfile.TarError) as e:
      raise OSError(errno.EIO, 'CWSANDBOX_FSS_RESTORE_FAILED: %s' % e)

  def spawn(self):
    p = self.p
    if self.parked is not None:
      # A warm slot's launcher is already in the sandbox's cgroups: it only needs its orders.
      pk = self.parked
      os.write(pk['go'], json.dumps({'exe': p['bwrapExe'], 'argv': p['bwrap'], 'nofile': p['nofile'], 'uid': p['uid'], 'gid': p['gid'], 'netns': p.get('netns'), 'lowPorts': p.get('lowPorts')}).encode())
      os.close(pk['go'])
      self.bwrap_pid = pk['pid']
      self.pidfd = os.pidfd_open(pk['pid'])
      self.out_r, self.err_r, self.info_r = pk['out'], pk['err'], pk['info']
      for fd in (self.out_r, self.err_r, self.info_r): os.set_blocking(fd, False)
      return
    out_r, out_w, err_r, err_w, info_r, info_w, sc_r = launcher_pipes()
    me = os.getpid()
    pid = os.fork()
    if pid == 0:
      try:
        for procs in p['cgroupProcs']: write_file(procs, str(os.getpid()))
        exec_bwrap(p['bwrapExe'], p['bwrap'], p['nofile'], p['uid'], p['gid'], [out_w, err_w, info_w, sc_r], me, p.get('netns'), p.get('lowPorts'))
      except BaseException as e:
        try: os.write(2, ('bwrap: paddock launch failed: %s\n' % e).encode())
        finally: os._exit(1)
    for fd in (out_w, err_w, info_w, sc_r): os.close(fd)
    self.bwrap_pid = pid
    self.pidfd = os.pidfd_open(pid)
    self.out_r, self.err_r, self.info_r = out_r, err_r, info_r
    for fd in (out_r, err_r, info_r): os.set_blocking(fd, False)

  # ---- running detection ----
  def check_running(self):
    if self.running or self.probing or self.init_pid is None or self.terminating: return
    try:
      with open('/proc/%d/task/%d/children' % (self.init_pid, self.init_pid)) as f: kids = f.read().split()
      for k in kids:
        st = os.stat('/proc/%s/exe' % k)
        if (st.st_dev, st.st_ino) != (self.bwrap_stat.st_dev, self.bwrap_stat.st_ino):
          self.main_pid = int(k)
          # With a startup probe the sandbox is RUNNING only once the probe passes.
          if self.probe is not None:
            self.probing = True
            self.probe.begin(time.time())
          else:
            self.mark_running()
          return
    except OSError:
      pass

  def mark_running(self):
    if self.running: return
    # The launch ran on a boosted CPU quota (bwrap's namespace and mount setup is the runner's
    # work, not the workload's); from here on the workload gets exactly what it asked for, or
    # nothing: a sandbox whose quota cannot be set does not run.
    steady = self.p.get('cpuSteady')
    if steady:
      try: write_file(steady['file'], steady['value'])
      except OSError as e:
        self.log(1, ('paddock: cannot set the CPU quota: %s\n' % e).encode())
        self.request_stop('FAILED_TO_START', 0)
        return
    self.running = True
    with open(os.path.join(self.dir, 'init.pid'), 'w') as f: f.write(str(self.init_pid or 0))
    self.emit('STATE_RUNNING')

  # ---- requests ----
  def accept(self, poller):
    while True:
      try: conn, _ = self.lsock.accept()
      except (BlockingIOError, InterruptedError): return
      # Left blocking (its handler needs it so); the header is peeked at with MSG_DONTWAIT. The
      # runner writes it as it connects, so it is mostly here already: read now, the connection
      # costs no poll registration and no further turn of the main loop (an exec makes three).
      self.pending[conn.fileno()] = conn
      if not self.read_header(conn.fileno()): poller.register(conn.fileno(), select.POLLIN)

  def read_header(self, fd, poller=None, hung_up=False):
    # True once the connection is dealt with, False while its header line is still to come.
    # `poller`: the one it waits in, if it does. `hung_up`: see take_request_line.
    conn = self.pending[fd]
    line = take_request_line(conn, hung_up)
    if line is LINE_PENDING: return False
    del self.pending[fd]
    if poller is not None: poller.unregister(fd)
    try: req = json.loads(line) if line is not None else None
    except ValueError: req = None
    if not isinstance(req, dict):
      conn.close(); return True
    self.handle(req, conn)
    return True

  def handle(self, req, conn):
    op = req.get('op')
    if op == 'stop':
      self.request_stop(req.get('reason') or 'STOPPED_BY_USER', float(req.get('grace', 0)))
      try: send_line(conn, {'ok': True})
      except OSError: pass
      conn.close()
    elif op in ('pause', 'resume'):
      try:
        res = self.pause(req.get('reason')) if op == 'pause' else self.resume()
      except OSError as e:
        res = {'ok': False, 'errno': 'EIO', 'message': str(e)}
      try: send_line(conn, res)
      except OSError: pass
      conn.close()
    elif op in ('hold', 'release'):
      try:
        res = self.hold(float(req.get('seconds') or 60)) if op == 'hold' else self.release()
      except OSError as e:
        res = {'ok': False, 'errno': 'EIO', 'message': str(e)}
      try: send_line(conn, res)
      except OSError: pass
      conn.close()
    elif op == 'ping':
      try: send_line(conn, {'ok': True, 'running': self.running, 'exited': self.exit_code is not None})
      except OSError: pass
      conn.close()
    elif op in ('exec', 'attach'):
      slot = self.execs.setdefault(req['id'], {'t': time.time()})
      slot[req.get('role', 'ctl')] = conn
      if op == 'exec': slot['req'] = req
      if all(k in slot for k in ('ctl', 'io', 'err')):
        del self.execs[req['id']]
        self.start_exec(slot['req'], [slot['ctl'], slot['io'], slot['err']])
    elif op == 'run':
      self.start_unary(req, conn)
    elif op == 'connect':
      if self.refuse_not_running([conn]): return
      self.start_handler(req, [conn])
    elif op == 'file':
      if self.refuse_not_running([conn]): return
      if self.execd_send({'op': 'file', 'req': req}, [conn]): conn.close()
      else: self.start_handler(req, [conn])
    else:
      conn.close()

  def answer_while_starting(self, _fd):
    # Before the main loop (init containers running): a stop is honoured at once, anything else
    # is refused as not running. Returns the stop's reason, if one came.
    reason = None
    while True:
      try: conn, _ = self.lsock.accept()
      except (BlockingIOError, InterruptedError): return reason
      try:
        conn.settimeout(2.0)
        line = b''
        while not line.endswith(b'\n') and len(line) < MAX_REQUEST_LINE:
          chunk = conn.recv(4096)
          if not chunk: break
          line += chunk
        req = json.loads(line.split(b'\n', 1)[0] or b'{}')
      except (OSError, ValueError):
        conn.close()
        continue
      if req.get('op') == 'stop':
        reason = req.get('reason') or 'STOPPED_BY_USER'
        if self.stop_reason is None:
          self.stop_reason = reason
          with open(os.path.join(self.dir, 'stop-reason'), 'w') as f: f.write(reason)
        try: send_line(conn, {'ok': True})
        except OSError: pass
        conn.close()
      elif req.get('op') == 'ping':
        try: send_line(conn, {'ok': True, 'running': False, 'exited': False})
        except OSError: pass
        conn.close()
      else:
        self.refuse_not_running([conn])

  def refuse_not_running(self, conns):
    # A frozen sandbox would leave the request hanging: the runner resumes it before sending any.
    if self.running and self.exit_code is None and not self.terminating and self.paused_at is None: return False
    try: send_line(conns[0], {'ok': False, 'errno': 'ENOTRUNNING', 'message': 'sandbox is not running'})
    except OSError: pass
    for c in conns: c.close()
    return True

  # ---- exec daemon ----
  # Commands without a terminal go to an exec daemon living inside the sandbox (its namespaces,
  # cgroups, uid, seccomp filter): it posix_spawns each command, so an exec costs a vfork and an
  # execve instead of a fork of this supervisor, seven setns calls and a second fork (about 9 ms
  # here, and a small CPU quota throttled it to the next 100 ms period). The daemon has exactly the
  # sandbox's privileges, so nothing it says is trusted beyond that sandbox; if it is gone (the
  # workload may kill it: same uid) it is started again, and if it does not keep up the request
  # takes the forked-handler path below.
  def start_exec(self, req, conns):
    if self.refuse_not_running(conns): return
    container = req.get('container')
    if container and container != self.p.get('primaryName', 'main'):
      # A sidecar: the forked handler enters that container's namespaces (the exec daemon lives in the primary's).
      try:
        if self.pod is None: raise LookupError('container "%s" is not a container of this sandbox' % container)
        init_pid, c = self.pod.exec_target(container)
      except LookupError as e:
        try: send_line(conns[0], {'ok': False, 'errno': 'ENOCONTAINER', 'message': str(e)})
        except OSError: pass
        for cn in conns: cn.close()
        return
      self.start_handler(dict(req, cwd=req.get('cwd') or c['execCwd']), conns, init_pid, sidecar_identity(self.p, c))
      return
    if not req.get('tty') and self.execd_send({'op': 'exec', 'argv': req['argv'], 'env': req.get('env') or {}, 'cwd': req.get('cwd') or self.p['execCwd']}, conns):
      for c in conns: c.close()
      return
    self.start_handler(req, conns)

  def start_unary(self, req, conn):
    # A unary exec on one connection (see ExecDaemon.run_unary). Only the exec daemon runs those:
    # a sidecar's command, or a daemon that cannot be reached, is answered EUNARY, and the runner
    # sends the command again the three-connection way, which the forked handler serves too.
    if self.refuse_not_running([conn]): return
    container = req.get('container')
    if not (container and container != self.p.get('primaryName', 'main')):
      body = {'op': 'run', 'argv': req['argv'], 'env': req.get('env') or {}, 'cwd': req.get('cwd') or self.p['execCwd']}
      if self.execd_send(body, [conn]):
        conn.close()
        return
    try: send_line(conn, {'ok': False, 'errno': 'EUNARY', 'message': 'not served on one connection'})
    except OSError: pass
    conn.close()

  def execd_send(self, body, conns):
    msg = json.dumps(body).encode()
    for _ in range(2):
      if self.execd is None:
        try: self.execd = self.start_execd()
        except OSError: return False
      try:
        socket.send_fds(self.execd, [msg], [c.fileno() for c in conns])
        return True
      except BlockingIOError:
        return False
      except OSError as e:
        if e.errno == errno.EMSGSIZE: return False
        self.execd.close()
        self.execd = None
    return False

  def start_execd(self):
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    listener = self.execd_socket.bind()
    pid_r, pid_w = os.pipe()
    try: pid = os.fork()
    except OSError:
      self.execd_socket.discard(listener)
      raise
    if pid == 0:
      code = 1
      try:
        ours.close()
        os.close(pid_r)
        # On cgroup v1 the daemon joins every cgroup of the sandbox but the cpu one, whose
        # cgroup.procs it keeps open for the commands it starts (see execd_main).
        cpu_procs = execd_cpu_procs(self.p)
        cpu_fd = os.open(cpu_procs, os.O_WRONLY | os.O_CLOEXEC) if cpu_procs else None
        for procs in self.p['cgroupProcs']:
          if procs != cpu_procs: write_file(procs, str(os.getpid()))
        enter_sandbox(self.p, self.init_pid, join_cgroups=False)
        # The second fork puts the daemon in the sandbox's pid namespace (setns(pid) applies to
        # children). This intermediate exits at once; the daemon is reparented to the supervisor
        # (a child subreaper), which reaps it like a handler when it exits.
        child = os.fork()
        if child == 0: execd_main(self.p, theirs, cpu_fd, listener)
        os.write(pid_w, struct.pack('<i', child))
        code = 0
      finally:
        os._exit(code)
    theirs.close()
    os.close(pid_w)
    try: data = os.read(pid_r, 4)
    finally: os.close(pid_r)
    os.waitpid(pid, 0)
    if len(data) != 4:
      ours.close()
      self.execd_socket.discard(listener)
      raise OSError(errno.ECHILD, 'the exec daemon did not start')
    self.add_handler(struct.unpack('<i', data)[0])
    ours.setblocking(False)
    self.execd_socket.publish(listener)
    return ours

  def start_handler(self, req, conns, init_pid=None, plan=None):
    # Callers have refused requests to a sandbox that is not running (refuse_not_running).
    pid = os.fork()
    if pid == 0:
      code = 0
      try:
        close_fds_except(*(c.fileno() for c in conns))
        null = os.open('/dev/null', os.O_RDWR)
        for t in (0, 1, 2): os.dup2(null, t)
        os.close(null)
        p = plan or self.p
        if req['op'] == 'file': file_handler(p, init_pid or self.init_pid, conns[0], req)
        elif req['op'] == 'connect': relay_handler(self.p, self.init_pid, conns[0], int(req['port']))
        else: exec_handler(p, init_pid or self.init_pid, conns, req)
      except BaseException as e:
        code = 1
        try: send_line(conns[0], {'ok': False, 'errno': 'EIO', 'message': str(e), 'exit': 126})
        except BaseException: pass
      os._exit(code)
    self.add_handler(pid)
    for c in conns: c.close()

  def spawn_probe(self, argv):
    # One startup-probe run inside the primary; its exit status is the probe's verdict.
    return probe_process(self.p, self.init_pid, argv)
  # ---- pause and resume ----
  # Pausing freezes every process of the sandbox in its cgroup (the v1 freezer controller, or v2's
  # cgroup.freeze): they keep their memory and resume where they stopped. Paused time does not
  # count against the lifetime: the deadline moves by the time spent frozen.
  def freezer(self):
    for d in self.p['cgroupDirs']:
      if os.path.exists(os.path.join(d, 'freezer.state')): return ('v1', d)
      if os.path.exists(os.path.join(d, 'cgroup.freeze')): return ('v2', d)
    return (None, None)

  def set_frozen(self, frozen, timeout=10.0):
    kind, d = self.freezer()
    if kind is None: raise OSError(errno.ENOTSUP, 'no freezer for this sandbox\'s cgroups')
    if kind == 'v1':
      want = 'FROZEN' if frozen else 'THAWED'
      write_file(os.path.join(d, 'freezer.state'), want)
      end = time.time() + timeout
      # FREEZING until every task has stopped; writing FROZEN again retries the stragglers.
      while True:
        with open(os.path.join(d, 'freezer.state')) as f: state = f.read().strip()
        if state == want: return
        if time.time() > end: raise OSError(errno.ETIMEDOUT, 'the freezer stayed %s' % state)
        if frozen: write_file(os.path.join(d, 'freezer.state'), want)
        time.sleep(0.001)
    write_file(os.path.join(d, 'cgroup.freeze'), '1' if frozen else '0')
    end = time.time() + timeout
    while True:
      with open(os.path.join(d, 'cgroup.events')) as f:
        if ('frozen %d' % (1 if frozen else 0)) in f.read(): return
      if time.time() > end: raise OSError(errno.ETIMEDOUT, 'the cgroup did not %s' % ('freeze' if frozen else 'thaw'))
      time.sleep(0.001)

  def pause(self, reason=None):
    if self.paused_at is not None: return {'ok': True, 'paused': True}
    if not self.running or self.exit_code is not None or self.terminating:
      return {'ok': False, 'errno': 'ENOTRUNNING', 'message': 'sandbox is not running'}
    # The daemon's socket first: a connect from now on comes here and is refused as not running,
    # instead of waiting in the backlog of a frozen daemon.
    self.execd_socket.close_gate()
    try: self.set_frozen(True)
    except OSError:
      self.execd_socket.open_gate()
      raise
    self.paused_at = time.time()
    with open(os.path.join(self.dir, 'paused-at'), 'w') as f: f.write(repr(self.paused_at))
    self.emit('STATE_PAUSED', reason)
    return {'ok': True, 'paused': True, 'deadlineMs': int(self.deadline * 1000)}

  def resume(self):
    if self.paused_at is None: return {'ok': True, 'paused': False, 'deadlineMs': int(self.deadline * 1000)}
    self.set_frozen(False)
    self.deadline += time.time() - self.paused_at
    self.paused_at = None
    if self.exit_code is None and not self.terminating: self.execd_socket.open_gate()
    # The moved deadline outlives this process's memory: a restarted runner adopts it from here.
    with open(os.path.join(self.dir, 'deadline-ms'), 'w') as f: f.write(str(int(self.deadline * 1000)))
    try: os.unlink(os.path.join(self.dir, 'paused-at'))
    except OSError: pass
    if self.exit_code is None and not self.terminating: self.emit('STATE_RUNNING')
    return {'ok': True, 'paused': False, 'deadlineMs': int(self.deadline * 1000)}

  # A hold freezes the sandbox for a moment without pausing it (no state change, the lifetime
  # runs on): a snapshot reads its disk meanwhile, so what it captures is consistent. A hold that
  # is never released (its runner died) ends on its own after `seconds`.
  def hold(self, seconds):
    if not self.running or self.exit_code is not None or self.terminating:
      return {'ok': False, 'errno': 'ENOTRUNNING', 'message': 'sandbox is not running'}
    if self.paused_at is None and self.held_until is None: self.set_frozen(True)
    self.held_until = time.time() + seconds
    return {'ok': True}

  def release(self):
    if self.held_until is not None:
      self.held_until = None
      if self.paused_at is None: self.set_frozen(False)
    return {'ok': True}

  def request_stop(self, reason, grace):
    if self.exit_code is not None: return
    if self.held_until is not None:
      try: self.release()
      except OSError: pass
    # Frozen processes take no signal (not even SIGKILL on the v1 freezer): thaw first.
    if self.paused_at is not None:
      try: self.resume()
      except OSError: pass
    if self.stop_reason is None:
      self.stop_reason = reason
      with open(os.path.join(self.dir, 'stop-reason'), 'w') as f: f.write(reason)
    self.execd_socket.remove()
    if not self.terminating:
      self.terminating = True
      self.emit('STATE_TERMINATING', reason)
    if grace <= 0:
      self.signal_box(signal.SIGKILL)
      self.kill_at = time.time()
    else:
      # Like a container runtime: SIGTERM goes to the main process, which owns its children.
      if self.main_pid is not None:
        try: os.kill(self.main_pid, signal.SIGTERM)
        except OSError: pass
      else:
        self.signal_box(signal.SIGTERM)
      at = time.time() + grace
      self.kill_at = at if self.kill_at is None else min(self.kill_at, at)

  def add_handler(self, pid):
    self.handlers.add(pid)
    try: fd = os.pidfd_open(pid)
    except OSError: return
    self.handler_fds[fd] = pid
    if self.poller is not None: self.poller.register(fd, select.POLLIN)

  def reap_handler(self, fd):
    pid = self.handler_fds.pop(fd)
    if self.poller is not None: self.poller.unregister(fd)
    os.close(fd)
    try: os.waitpid(pid, os.WNOHANG)
    except ChildProcessError: pass
    self.handlers.discard(pid)

  def idle_timeout(self, now, started):
    """Milliseconds the main loop may block in poll: -1 (until an event) unless something is due.

    Every fd the loop serves wakes it by itself; only timers need a timeout. An idle sandbox then
    costs no wakeups at all, which matters with hundreds of them on one machine."""
    if not self.running and self.init_pid is not None and self.exit_code is None:
      # Watching for the main process's exec: tight at first, then backing off so that a burst
      # of launches does not spend the CPU it needs on polling /proc.
      waited = now - (self.init_seen_at or started)
      timeout = 1 if waited < 0.02 else 5 if waited < 0.5 else 20
    else:
      timeout = -1
    due = [self.kill_at, self.held_until]
    if self.stop_reason is None and self.paused_at is None: due.append(self.deadline)
    if self.execs: due.append(min(v['t'] for v in self.execs.values()) + 10)
    for t in due:
      if t is None: continue
      # At most an hour: poll takes a C int, and a lifetime of weeks would overflow it.
      ms = min(IDLE_MAX_MS, max(0, int((t - now) * 1000) + 1))
      timeout = ms if timeout < 0 else min(timeout, ms)
    return timeout

  # ---- main loop ----
  def run(self):
    try:
      self.setup()
      sr = os.path.join(self.dir, 'stop-reason')
      if os.path.exists(sr):
        with open(sr) as f: self.stop_reason = f.read().strip() or 'STOPPED_BY_USER'
        self.finish(None, 'stopped before start')
        return
      if self.pod is not None and self.p.get('initContainers'):
        outcome = self.pod.run_inits(self.p['deadlineMs'] / 1000.0, sr, self.answer_while_starting)
        if outcome is not None:
          kind, detail = outcome
          if kind == 'failed': self.init_failure = detail
          else: self.stop_reason = detail
          self.finish(None, detail if kind == 'failed' else 'stopped before start')
          return
      self.spawn()
    except BaseException as e:
      self.finish(None, 'launch failed: %s' % e, failed_to_start=True)
      return
    poller = select.poll()
    fds = {self.out_r: 0, self.err_r: 1}
    for fd in fds: poller.register(fd, select.POLLIN)
    poller.register(self.info_r, select.POLLIN)
    poller.register(self.pidfd, select.POLLIN)
    poller.register(self.lsock.fileno(), select.POLLIN)
    if self.pod is not None:
      try: self.pod.start_sidecars(poller)
      except OSError as e:
        self.log(1, ('paddock: cannot start a sidecar: %s\n' % e).encode())
        self.request_stop('FAILED_TO_START', 0)
    started = time.time()
    exited_at = None
    self.poller = poller
    for fd in self.handler_fds: poller.register(fd, select.POLLIN)
    while True:
      now = time.time()
      timeout = self.idle_timeout(now, started)
      if exited_at is not None: timeout = 100 if timeout < 0 else min(timeout, 100)
      for fd, ev in poller.poll(timeout):
        if fd in fds:
          try: data = os.read(fd, 65536)
          except BlockingIOError: continue
          if not data:
            poller.unregister(fd); del fds[fd]; os.close(fd); continue
          if fd == self.err_r and len(self.stderr_head) < 512: self.stderr_head += data[:512]
          self.log(fds[fd], data)
        elif fd == self.info_r:
          data = os.read(self.info_r, 4096)
          if data: self.info += data
          try:
            self.init_pid = json.loads(self.info)['child-pid']
            self.init_seen_at = time.time()
            poller.unregister(self.info_r)
          except (ValueError, KeyError):
            if not data: poller.unregister(self.info_r)
        elif fd == self.pidfd:
          poller.unregister(self.pidfd)
          _, status = os.waitpid(self.bwrap_pid, 0)
          self.exit_code = os.waitstatus_to_exitcode(status)
          self.execd_socket.remove()
          exited_at = time.time()
          # The namespace's init is gone; make sure nothing (exec'd or stray) keeps a pipe open.
          self.kill_box_and_wait(2.0)
        elif fd == self.lsock.fileno():
          self.accept(poller)
        elif self.pod is not None and self.pod.handle(fd, poller):
          pass
        elif fd in self.pending:
          self.read_header(fd, poller, bool(ev & (select.POLLHUP | select.POLLERR)))
        elif fd in self.handler_fds:
          self.reap_handler(fd)
      self.check_running()
      if self.probing and not self.running and not self.terminating and self.exit_code is None:
        verdict = self.probe.tick(time.time())
        if verdict == 'passed':
          self.probing = False
          self.mark_running()
        elif verdict == 'failed':
          self.probing = False
          self.request_stop('STARTUP_PROBE_FAILED', 0)
      now = time.time()
      if self.held_until is not None and now >= self.held_until:
        try: self.release()
        except OSError: pass
      if self.stop_reason is None and self.paused_at is None and now >= self.deadline and self.exit_code is None:
        self.request_stop('LIFETIME_EXPIRED', self.p['termGraceMs'] / 1000.0)
      if self.kill_at is not None and now >= self.kill_at and self.exit_code is None:
        self.signal_box(signal.SIGKILL)
        self.kill_at = now + 0.05
      for k in [k for k, v in self.execs.items() if now - v['t'] > 10]:
        for role in ('ctl', 'io', 'err'):
          if role in self.execs[k]: self.execs[k][role].close()
        del self.execs[k]
      if self.exit_code is not None and (not fds or now - exited_at > 2.0):
        break
    self.finish(self.exit_code, None)

  def finish(self, code, message, failed_to_start=False):
    if self.bwrap_pid is None and not failed_to_start and self.stop_reason is None:
      failed_to_start = True
    self.kill_box_and_wait(10.0)
    if self.probe is not None: self.probe.reap()
    if self.pod is not None: self.pod.finish()
    for pid in list(self.handlers):
      try: os.waitpid(pid, 0)
      except OSError: pass
    oom = self.oom_count() > self.oom_before
    for d in self.p['cgroupDirs']:
      for _ in range(200):
        try: os.rmdir(d); break
        except FileNotFoundError: break
        except OSError: time.sleep(0.005)
    libc.umount2(self.disk.encode(), MNT_DETACH)
    try: os.rmdir(self.disk)
    except OSError: pass
    try: os.unlink(os.path.join(self.dir, 'sup.sock'))
    except OSError: pass
    self.execd_socket.remove()
    head = self.stderr_head.decode('utf-8', 'replace')
    if self.init_failure is not None:
      self.emit('STATE_FAILED', 'INIT_CONTAINER_FAILED', self.init_failure)
    elif failed_to_start or (not self.running and code == 1 and head.startswith('bwrap:')):
      msg = message or head.strip().splitlines()[0]
      self.emit('STATE_FAILED', 'FAILED_TO_START', msg)
    elif self.stop_reason is not None:
      state = 'STATE_COMPLETED' if self.stop_reason == 'STOPPED_BY_USER' else 'STATE_FAILED'
      if self.stop_reason == 'LIFETIME_EXPIRED': message = 'lifetime of %d s expired' % self.p['lifetimeSeconds']
      if self.stop_reason == 'STARTUP_PROBE_FAILED': message = self.probe.message()
      self.emit(state, self.stop_reason, message, code if code is not None and code >= 0 else None)
    elif oom and code != 0:
      self.emit('STATE_FAILED', 'OUT_OF_MEMORY', 'the sandbox exceeded its memory limit of %d bytes' % self.p['memoryBytes'], code)
    else:
      if not self.running: self.emit('STATE_RUNNING')
      self.emit('STATE_COMPLETED' if code == 0 else 'STATE_FAILED', 'EXITED', None if code == 0 else 'main process exited with code %s' % code, code)

IDLE_MAX_MS = 3600 * 1000

def execd_cpu_procs(p):
  # The cpu hierarchy's cgroup.procs of the sandbox, where cpu is a v1 hierarchy of its own
  # (several cgroup.procs files). On v2 one cgroup holds every controller: the daemon stays in it.
  procs = os.path.join(os.path.dirname(p['cpuSteady']['file']), 'cgroup.procs')
  return procs if len(p['cgroupProcs']) > 1 and procs in p['cgroupProcs'] else None

# ---- handlers (run in a forked child of the supervisor) ----
def sidecar_identity(p, c):
  # An exec in a sidecar runs as that container runs (its runAsUser, its capabilities), never as the primary.
  return dict(p, innerUid=c.get('innerUid', p['uid']), innerGid=c.get('innerGid', p['gid']), capAdd=c.get('capAdd') or [])

def enter_sandbox(p, init_pid, join_cgroups=True):
  if join_cgroups:
    for procs in p['cgroupProcs']: write_file(procs, str(os.getpid()))
  fds = [(ns, os.open('/proc/%d/ns/%s' % (init_pid, ns), os.O_RDONLY)) for ns in NS_ORDER]
  for ns, fd in fds:
    if libc.setns(fd, 0) != 0:
      e = ctypes.get_errno()
      raise OSError(e, 'setns %s: %s' % (ns, os.strerror(e)))
    os.close(fd)

def exec_handler(p, init_pid, conns, req):
  ctl, io, err = conns
  # The command joins the sandbox's cgroups just before exec, not this handler: the handler's fork
  # and setns are the runner's work, and charging them to a small CPU quota (100m = 10 ms per
  # 100 ms period) throttled every exec to the next period. The files are opened here because
  # inside the sandbox's mount namespace the host's /sys/fs/cgroup is out of reach; writes through
  # them are checked against the opener's credentials (Linux >= 5.16).
  join = [os.open(procs, os.O_WRONLY | os.O_CLOEXEC) for procs in p['cgroupProcs']]
  enter_sandbox(p, init_pid, join_cgroups=False)
  tty = bool(req.get('tty'))
  master = slave = None
  if tty:
    master, slave = os.openpty()
    fcntl.ioctl(master, termios.TIOCSWINSZ, struct.pack('HHHH', req.get('rows') or 24, req.get('cols') or 80, 0, 0))
  er, ew = os.pipe2(os.O_CLOEXEC)
  prog = seccomp_program()
  pid = os.fork()
  if pid == 0:
    try:
      for fd in join: os.write(fd, b'0')
      os.setsid()
      if tty:
        for t in (0, 1, 2): os.dup2(slave, t)
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)
      else:
        src = [high_fd(io.fileno()), high_fd(io.fileno()), high_fd(err.fileno())]
        for t, fd in enumerate(src): os.dup2(fd, t)
      os.closerange(3, ew)
      os.closerange(ew + 1, 1 << 20)
      drop_privileges(p)
      resource.setrlimit(resource.RLIMIT_NOFILE, (p['nofile'], p['nofile']))
      install_seccomp(prog)
      reset_signals()
      os.chdir(req.get('cwd') or p['execCwd'])
      os.execvpe(req['argv'][0], req['argv'], req.get('env') or {})
    except BaseException as e:
      try: os.write(ew, str(e).encode())
      finally: os._exit(127)
  os.close(ew)
  for fd in join: os.close(fd)
  if slave is not None: os.close(slave)
  failure = os.read(er, 4096)
  os.close(er)
  if failure:
    msg = 'paddock: cannot run %s: %s\n' % (req['argv'][0], failure.decode('utf-8', 'replace'))
    try: err.sendall(msg.encode())
    except OSError: pass
  else:
    send_line(ctl, {'started': True, 'pid': pid})
  if not tty:
    io.close(); err.close()
  else:
    err.close()
  pidfd = os.pidfd_open(pid)
  poller = select.poll()
  poller.register(ctl.fileno(), select.POLLIN)
  poller.register(pidfd, select.POLLIN)
  if tty:
    poller.register(master, select.POLLIN)
    poller.register(io.fileno(), select.POLLIN)
  buf = b''
  status = None
  while status is None:
    for fd, ev in poller.poll():
      if fd == pidfd:
        _, st = os.waitpid(pid, 0)
        status = st
      elif fd == ctl.fileno():
        data = ctl.recv(4096)
        if not data:
          try: os.killpg(pid, signal.SIGKILL)
          except OSError: pass
          poller.unregister(fd)
          continue
        buf += data
        while b'\n' in buf:
          line, buf = buf.split(b'\n', 1)
          msg = json.loads(line)
          if 'kill' in msg:
            try: os.killpg(pid, getattr(signal, msg['kill'], signal.SIGKILL))
            except OSError: pass
          if 'resize' in msg and master is not None:
            cols, rows = msg['resize']
            fcntl.ioctl(master, termios.TIOCSWINSZ, struct.pack('HHHH', rows, cols, 0, 0))
      elif master is not None and fd == master:
        try: data = os.read(master, 65536)
        except OSError: data = b''
        if data: io.sendall(data)
        else: poller.unregister(master)
      elif master is not None and fd == io.fileno():
        data = io.recv(65536)
        if data: os.write(master, data)
        else:
          poller.unregister(fd)
          try: os.write(master, b'\x04')
          except OSError: pass
  if master is not None:
    os.set_blocking(master, False)
    while True:
      try: data = os.read(master, 65536)
      except OSError: break
      if not data: break
      io.sendall(data)
    io.close()
  if os.WIFSIGNALED(status):
    res = {'exit': None, 'signal': signal.Signals(os.WTERMSIG(status)).name}
  else:
    res = {'exit': os.WEXITSTATUS(status), 'signal': None}
  if failure: res['error'] = failure.decode('utf-8', 'replace')
  send_line(ctl, res)

def probe_process(p, init_pid, argv):
  # Forked like an exec handler: joins the sandbox's cgroups and namespaces, then its child (in the
  # sandbox's pid namespace) drops to the sandbox user under the seccomp filter and runs the probe.
  # The intermediate leads a process group the supervisor kills on a timeout.
  prog = seccomp_program()
  pid = os.fork()
  if pid != 0: return pid
  code = 126
  try:
    null = os.open('/dev/null', os.O_RDWR)
    for t in (0, 1, 2): os.dup2(null, t)
    os.closerange(3, 1 << 20)
    os.setpgid(0, 0)
    enter_sandbox(p, init_pid)
    child = os.fork()
    if child == 0:
      try:
        drop_privileges(p)
        resource.setrlimit(resource.RLIMIT_NOFILE, (p['nofile'], p['nofile']))
        install_seccomp(prog)
        reset_signals()
        os.chdir(p['execCwd'])
        os.execvpe(argv[0], argv, p['execEnv'])
      finally:
        os._exit(127)
    _, status = os.waitpid(child, 0)
    code = os.waitstatus_to_exitcode(status)
    code = code if code >= 0 else 128 - code
  finally:
    os._exit(code & 0xff)

def file_handler(p, init_pid, conn, req):
  enter_sandbox(p, init_pid)
  drop_privileges(p)
  os.chdir(p['execCwd'])
  file_ops(conn, req)

# ---- the plan ----
_schema = None

def read_plan(path):
  # Checked before anything acts on it. A plan that does not match the runner's schema of it (a
  # runner and supervisor of different releases) ends the sandbox FAILED_TO_START naming each bad
  # field, on stdout and in its event file like any other end; None is returned.
  global _schema
  with open(path) as f: p = json.load(f)
  try:
    if _schema is None: _schema = plan_schema.load_schema()
    return plan_schema.check(p, _schema)
  except (plan_schema.PlanError, OSError, ValueError) as e:
    sandbox_id = p.get('sandboxId') if isinstance(p, dict) else None
    events = os.path.join(os.path.dirname(path), 'events.jsonl')
    try:
      with open(events, 'rb') as f: seq = sum(1 for _ in f) + 1
    except OSError: seq = 1
    ev = {'seq': seq, 'state': 'STATE_FAILED', 'reason': 'FAILED_TO_START', 'message': 'launch failed: %s' % e, 'at': time.time()}
    if isinstance(sandbox_id, str): ev['sandboxId'] = sandbox_id
    line = (json.dumps(ev) + '\n').encode()
    with open(events, 'ab') as f: f.write(line)
    try: os.write(1, line)
    except OSError: pass
    return None

def join_cgroup(procs):
  if procs:
    try: write_file(procs, str(os.getpid()))
    except OSError: pass

def main():
  signal.signal(signal.SIGINT, signal.SIG_IGN)
  signal.signal(signal.SIGHUP, signal.SIG_IGN)
  # Drop every descriptor inherited from the runner except stdio: a detached supervisor must not
  # hold the runner's own pipes open after the runner is gone.
  os.closerange(3, 1 << 20)
  mode = sys.argv[1]
  join_cgroup(sys.argv[2] if len(sys.argv) > 2 else '')
  if mode == 'zygote':
    zygote()
  plan = read_plan(sys.argv[3])
  if plan is not None: Supervisor(plan).run()
  os._exit(0)

# ---- warm slots ----
# Moving a process into a cgroup (cgroup.procs) waits for an RCU grace period on cgroup v1: about
# 12 ms here, the largest single cost of a launch. A warm slot pays it ahead of demand: a
# supervisor forked before any sandbox is asked for, whose launcher child has already moved itself
# into a fresh set of cgroups and waits. The runner renames those cgroups to the new sandbox's id,
# writes its limits, and hands the supervisor the plan. Unassigned, both die with the zygote.
def warm_slot(slot_path):
  with open(slot_path) as f: slot = json.load(f)
  zygote_pid = os.getppid()
  libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
  if os.getppid() != zygote_pid: os._exit(0)
  out_r, out_w, err_r, err_w, info_r, info_w, sc_r = launcher_pipes()
  go_r, go_w = os.pipe()
  ready_r, ready_w = os.pipe()
  me = os.getpid()
  pid = os.fork()
  if pid == 0:
    try:
      libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
      if os.getppid() != me: os._exit(1)
      for fd in (go_w, ready_r, out_r, err_r, info_r): os.close(fd)
      for procs in slot['cgroupProcs']: write_file(procs, str(os.getpid()))
      os.write(ready_w, b'r')
      os.close(ready_w)
      orders = b''
      while True:
        chunk = os.read(go_r, 65536)
        if not chunk: break
        orders += chunk
      if not orders: os._exit(0)
      o = json.loads(orders)
      exec_bwrap(o['exe'], o['argv'], o['nofile'], o['uid'], o['gid'], [out_w, err_w, info_w, sc_r], me, o.get('netns'), o.get('lowPorts'))
    except BaseException as e:
      try: os.write(err_w, ('bwrap: paddock launch failed: %s\n' % e).encode())
      finally: os._exit(1)
  for fd in (out_w, err_w, info_w, sc_r, go_r, ready_w): os.close(fd)
  if os.read(ready_r, 1) != b'r': os._exit(1)
  os.close(ready_r)
  with open(os.path.join(slot['dir'], 'pid'), 'w') as f: f.write(str(os.getpid()))
  lsock = listen_unix(slot['dir'], 'slot.sock')
  conn, _ = lsock.accept()
  line = b''
  while not line.endswith(b'\n'):
    chunk = conn.recv(65536)
    if not chunk: os._exit(0)
    line += chunk
  req = json.loads(line)
  # Assigned: from here on this is a sandbox's supervisor and outlives the runner like any other.
  libc.prctl(PR_SET_PDEATHSIG, 0, 0, 0, 0)
  lsock.close()
  plan = read_plan(req['plan'])
  if plan is None:
    # Ended already (reported): the parked launcher dies with this process (PDEATHSIG).
    send_line(conn, {'ok': True})
    os._exit(0)
  sup = Supervisor(plan)
  sup.parked = {'pid': pid, 'go': go_w, 'out': out_r, 'err': err_r, 'info': info_r}
  send_line(conn, {'ok': True})
  conn.close()
  sup.run()

def zygote():
  # A warm interpreter that forks one supervisor per plan path read from stdin: a fork costs about
  # a millisecond where a fresh Python costs tens. Supervisors start their own session and outlive
  # the zygote; the zygote leaves when the runner goes away (EOF on stdin, or reparented).
  global _schema
  # Read once: every supervisor this zygote forks checks its plan against the schema of the
  # runner that started it (a later runner rewrites the file for its own zygote).
  _schema = plan_schema.load_schema()
  # Everything loaded so far lives as long as this process and every supervisor it forks: frozen,
  # a full collection in a supervisor skips it instead of writing to (and so copying) its pages.
  gc.freeze()
  parent = os.getppid()
  buf = b''
  while True:
    ready, _, _ = select.select([0], [], [], 1.0)
    while True:
      try:
        pid, _ = os.waitpid(-1, os.WNOHANG)
        if pid == 0: break
      except ChildProcessError:
        break
    if os.getppid() != parent: os._exit(0)
    if not ready: continue
    data = os.read(0, 65536)
    if not data: os._exit(0)
    buf += data
    while b'\n' in buf:
      line, buf = buf.split(b'\n', 1)
      path = line.decode().strip()
      if not path: continue
      if os.fork() == 0:
        try:
          os.setsid()
          null = os.open('/dev/null', os.O_RDONLY)
          os.dup2(null, 0)
          os.close(null)
          if path.startswith('warm '):
            warm_slot(path[5:])
          else:
            plan = read_plan(path)
            if plan is not None: Supervisor(plan).run()
        finally:
          os._exit(0)

if __name__ == '__main__':
  main()
