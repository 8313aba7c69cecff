"""The containers of a sandbox other than its primary, its scratch volumes and its shared network.

Every container is its own bwrap, started like the primary (a launcher that joins the sandbox's
cgroups, enters the shared network namespace, drops to the sandbox user and execs bwrap), so all
of them count against the sandbox's limits together and the supervisor's kill of the cgroup ends
them all. Init containers run one after another before the primary; sidecars run beside it and are
killed when it ends. Each container's output goes to its own framed log (`log.<name>`).
"""
import ctypes, json, os, select, signal, struct, time

from paddock_supervisor.launch import CLONE_NEWNET, exec_bwrap, launcher_pipes, loopback_up
from paddock_supervisor.sysutil import libc, write_file

MS_NOSUID, MS_NODEV, MNT_DETACH = 2, 4, 2
HEADER = struct.Struct('<IBxxxd')


class FramedLog:
  """One container's output: records of `<u32 length, u8 stream, 3 pad, f64 time>` + bytes, capped with one marker."""

  def __init__(self, path, cap):
    self.f = open(path, 'ab', buffering=0)
    self.cap = cap
    self.bytes = 0
    self.truncated = False

  def write(self, stream, data):
    if self.bytes >= self.cap:
      if not self.truncated:
        self.truncated = True
        marker = ('\n[paddock: output truncated at %d bytes; further output dropped]\n' % self.cap).encode()
        self.f.write(HEADER.pack(len(marker), 1, time.time()) + marker)
        self.bytes += len(marker)
      return
    data = data[:self.cap - self.bytes]
    self.f.write(HEADER.pack(len(data), stream, time.time()) + data)
    self.bytes += len(data)
    if self.bytes >= self.cap: self.write(stream, b'')


def loopback_netns():
  """A new network namespace with only loopback up, returned as an fd; this process stays in its own."""
  orig = os.open('/proc/self/ns/net', os.O_RDONLY)
  try:
    if libc.unshare(CLONE_NEWNET) != 0:
      e = ctypes.get_errno()
      raise OSError(e, 'unshare net: %s' % os.strerror(e))
    fd = os.open('/proc/self/ns/net', os.O_RDONLY)
    loopback_up()
  finally:
    # Back to the host's namespace whatever happened: the supervisor itself never lives in a sandbox's.
    if libc.setns(orig, CLONE_NEWNET) != 0:
      e = ctypes.get_errno()
      raise OSError(e, 'setns back to the host network: %s' % os.strerror(e))
    os.close(orig)
  return fd


class Container:
  """A running bwrap of a container other than the primary."""

  def __init__(self, name, pid, out_r, err_r, info_r, log):
    self.name, self.pid, self.log = name, pid, log
    self.pidfd = os.pidfd_open(pid)
    self.out_r, self.err_r, self.info_r = out_r, err_r, info_r
    for fd in (out_r, err_r, info_r): os.set_blocking(fd, False)
    self.info = b''
    self.init_pid = None
    self.exit_code = None

  def read(self, fd):
    """Reads what is there on one of its fds; False once that fd is done (EOF)."""
    try: data = os.read(fd, 65536)
    except BlockingIOError: return True
    except OSError: data = b''
    if fd == self.info_r:
      self.info += data
      try: self.init_pid = json.loads(self.info)['child-pid']
      except (ValueError, KeyError): pass
      return bool(data) and self.init_pid is None
    if data: self.log.write(0 if fd == self.out_r else 1, data)
    return bool(data)

  def reap(self, block=False):
    if self.exit_code is not None: return True
    try:
      pid, status = os.waitpid(self.pid, 0 if block else os.WNOHANG)
    except ChildProcessError:
      self.exit_code = -1
      return True
    if pid == 0: return False
    self.exit_code = os.waitstatus_to_exitcode(status)
    return True


class Pod:
  def __init__(self, sup):
    self.sup = sup
    self.p = sup.p
    self.netns_fd = None
    self.status = {}
    self.sidecars = []
    self.fds = {}
    self.mounted = []
    for c in self.p.get('initContainers', []): self.status[c['name']] = {'name': c['name'], 'state': 'waiting'}
    for c in self.p.get('sidecars', []): self.status[c['name']] = {'name': c['name'], 'state': 'waiting'}

  # ---- setup: volumes, directories, network ----
  def setup(self, disk):
    p = self.p
    for v in p.get('volumes', []):
      os.makedirs(v['dir'], mode=0o711, exist_ok=True)
      os.chmod(os.path.dirname(v['dir']), 0o711)
      opts = 'size=%d,uid=%d,gid=%d,mode=0755' % (v['sizeBytes'], p['uid'], p['gid'])
      if libc.mount(b'tmpfs', v['dir'].encode(), b'tmpfs', MS_NOSUID | MS_NODEV, opts.encode()) != 0:
        e = ctypes.get_errno()
        raise OSError(e, 'mount volume %s: %s' % (v['name'], os.strerror(e)))
      self.mounted.append(v['dir'])
      for sub in v['subPaths']: self.make_dirs(v['dir'], sub)
    for rel in p.get('dirs', []):
      self.make_dirs(disk, rel, 0o1777 if rel.endswith('/tmp') else 0o755)
    if p.get('sharedLoopbackNet'):
      self.netns_fd = loopback_netns()
      # Every launcher (the primary's, a warm slot's, each container's) enters this namespace.
      p['netns'] = '/proc/%d/fd/%d' % (os.getpid(), self.netns_fd)
    self.write_status()

  def make_dirs(self, root, rel, mode=0o755):
    d = root
    for part in rel.split('/'):
      d = os.path.join(d, part)
      if not os.path.isdir(d):
        os.mkdir(d)
        os.chown(d, self.p['uid'], self.p['gid'])
        os.chmod(d, mode)

  def write_status(self):
    path = os.path.join(self.sup.dir, 'containers.json')
    tmp = path + '.tmp'
    with open(tmp, 'w') as f: json.dump(list(self.status.values()), f)
    os.rename(tmp, path)

  def set_status(self, name, state, exit_code=None):
    st = {'name': name, 'state': state}
    if exit_code is not None: st['exitCode'] = exit_code
    self.status[name] = st
    self.write_status()

  def start(self, name, bwrap):
    p = self.p
    out_r, out_w, err_r, err_w, info_r, info_w, sc_r = launcher_pipes()
    me = os.getpid()
    pid = os.fork()
    if pid == 0:
      try:
        for procs in p['cgroupProcs']: write_file(procs, str(os.getpid()))
        exec_bwrap(p['bwrapExe'], bwrap, p['nofile'], p['uid'], p['gid'], [out_w, err_w, info_w, sc_r], me, p.get('netns'), p.get('lowPorts'))
      except BaseException as e:
        try: os.write(2, ('bwrap: paddock launch failed: %s\n' % e).encode())
        finally: os._exit(1)
    for fd in (out_w, err_w, info_w, sc_r): os.close(fd)
    log = FramedLog(os.path.join(self.sup.dir, 'log.%s' % name), p['logCapBytes'])
    return Container(name, pid, out_r, err_r, info_r, log)

  # ---- init containers ----
  def run_inits(self, deadline, stop_file, answer):
    """Runs the init containers in order. Returns None when all succeeded, else ('failed', message) or ('stopped', reason).

    `answer(fd)` serves a request arriving on the supervisor's socket meanwhile (the main loop is
    not running yet) and returns the stop reason when it was a stop."""
    for c in self.p.get('initContainers', []):
      self.set_status(c['name'], 'running')
      proc = self.start(c['name'], c['bwrap'])
      open_fds = {proc.out_r, proc.err_r, proc.info_r}
      poller = select.poll()
      for fd in open_fds: poller.register(fd, select.POLLIN)
      poller.register(proc.pidfd, select.POLLIN)
      lsock = self.sup.lsock.fileno()
      poller.register(lsock, select.POLLIN)
      stopped = None
      while proc.exit_code is None:
        for fd, _ in poller.poll(100):
          if fd == lsock:
            reason = answer(fd)
            if reason and stopped is None: stopped = reason
          elif fd == proc.pidfd:
            poller.unregister(fd)
            proc.reap(block=True)
          elif fd in open_fds and not proc.read(fd):
            poller.unregister(fd); open_fds.discard(fd)
        if stopped is None:
          if os.path.exists(stop_file):
            with open(stop_file) as f: stopped = f.read().strip() or 'STOPPED_BY_USER'
          elif time.time() >= deadline:
            stopped = 'LIFETIME_EXPIRED'
        if stopped is not None and proc.exit_code is None:
          # Again on every turn: a launcher that has not joined the cgroups yet (a stop right
          # after the start) is missed by the cgroup's kill, so it is also killed as our child.
          try: os.kill(proc.pid, signal.SIGKILL)
          except OSError: pass
          self.sup.signal_box(signal.SIGKILL)
      # Whatever the init container left behind goes before the next one starts.
      self.sup.kill_box_and_wait(5.0)
      for fd in list(open_fds):
        while proc.read(fd): pass
      for fd in (proc.out_r, proc.err_r, proc.info_r, proc.pidfd): os.close(fd)
      self.set_status(c['name'], 'terminated', proc.exit_code)
      if stopped is not None: return ('stopped', stopped)
      if proc.exit_code != 0:
        return ('failed', 'init container "%s" exited with code %s' % (c['name'], proc.exit_code))
    return None

  # ---- sidecars ----
  def start_sidecars(self, poller):
    for c in self.p.get('sidecars', []):
      proc = self.start(c['name'], c['bwrap'])
      self.sidecars.append((c, proc))
      for fd in (proc.out_r, proc.err_r, proc.info_r, proc.pidfd):
        self.fds[fd] = proc
        poller.register(fd, select.POLLIN)
      self.set_status(c['name'], 'running')

  def handle(self, fd, poller):
    """Serves a poll event on one of the sidecars' fds; False when the fd is not theirs."""
    proc = self.fds.get(fd)
    if proc is None: return False
    if fd == proc.pidfd:
      proc.reap(block=True)
      done = True
      self.set_status(proc.name, 'terminated', proc.exit_code)
    else:
      done = not proc.read(fd)
    if done:
      poller.unregister(fd)
      del self.fds[fd]
      os.close(fd)
    return True

  def exec_target(self, container):
    """(init pid, exec defaults) of the sidecar `container`; None for the primary. Raises LookupError for others."""
    if not container or container == self.p.get('primaryName', 'main'): return None
    for c, proc in self.sidecars:
      if c['name'] == container:
        if proc.init_pid is None or proc.exit_code is not None:
          raise LookupError('container "%s" is not running' % container)
        return proc.init_pid, c
    raise LookupError('container "%s" is not a running container of this sandbox' % container)

  def finish(self):
    # The sandbox's cgroup has been emptied: every sidecar is gone, only its exit status is left.
    for _, proc in self.sidecars:
      # A launcher still on its way into the cgroups escaped the cgroup's kill: killed as our child.
      if proc.exit_code is None:
        try: os.kill(proc.pid, signal.SIGKILL)
        except OSError: pass
      if proc.reap(block=True) and self.status.get(proc.name, {}).get('state') != 'terminated':
        self.set_status(proc.name, 'terminated', proc.exit_code)
    for fd in list(self.fds):
      try: os.close(fd)
      except OSError: pass
    self.fds.clear()
    for d in self.mounted:
      libc.umount2(d.encode(), MNT_DETACH)
      try: os.rmdir(d)
      except OSError: pass
    if self.netns_fd is not None:
      os.close(self.netns_fd)
      self.netns_fd = None
