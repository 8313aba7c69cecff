import json, os, resource, signal, socket, tempfile, time, unittest

from support import SUPERVISOR_DIR
from paddock_supervisor import execd
from paddock_supervisor.sysutil import close_fds_except, MAX_REQUEST_LINE

ENV = {'PATH': '/usr/bin:/bin'}


def children(pid):
  with open('/proc/%d/task/%d/children' % (pid, pid)) as f: return [int(x) for x in f.read().split()]


def comm(pid):
  with open('/proc/%d/comm' % pid) as f: return f.read().strip()


def gone(pid, timeout=5.0):
  # Exited: no process, or a zombie (an empty command line) until its new parent reaps it.
  end = time.time() + timeout
  while time.time() < end:
    try:
      with open('/proc/%d/cmdline' % pid) as f:
        if not f.read(): return True
    # Gone before the open, or between the open and the read (ESRCH).
    except (FileNotFoundError, ProcessLookupError):
      return True
    time.sleep(0.01)
  return False


class Daemon:
  """An ExecDaemon in a forked process, as on cgroup v1: `cpu` stands in for the sandbox's cpu
  cgroup.procs (the spawner writes its join there). Not sandboxed: this tests its protocol."""

  def __init__(self, cpu_mode='w', listen=False, nofile=None):
    self.dir = tempfile.TemporaryDirectory()
    self.cpu = os.path.join(self.dir.name, 'cgroup.procs')
    open(self.cpu, 'w').close()
    self.sock, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    cpu_fd = os.open(self.cpu, os.O_WRONLY if cpu_mode == 'w' else os.O_RDONLY)
    # The daemon's own socket, as the supervisor binds it and hands it over (ExecDaemonSocket).
    self.own = os.path.join(self.dir.name, 'exec.sock')
    listener = None
    if listen:
      listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
      listener.bind(self.own)
      listener.listen(128)
    self.pid = os.fork()
    if self.pid == 0:
      try:
        self.sock.close()
        # As execd_main leaves it: stdio, its request socket, the cpu cgroup's descriptor and its own socket.
        close_fds_except(theirs.fileno(), cpu_fd, listener.fileno() if listener else None)
        if nofile: resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))
        execd.ExecDaemon(theirs, self.dir.name, cpu_fd, listener).run()
      finally:
        os._exit(0)
    theirs.close()
    os.close(cpu_fd)
    if listener: listener.close()

  def connect(self, body):
    """A request on the daemon's own socket, as the runner sends it; returns the connection."""
    ctl = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    ctl.settimeout(10)
    ctl.connect(self.own)
    ctl.sendall(body if isinstance(body, bytes) else json.dumps(body).encode() + b'\n')
    return ctl

  def spawners(self):
    return [c for c in children(self.pid) if comm(c) == 'paddock-spawner']

  def exec(self, argv, cwd=None, env=None):
    """Starts a command; returns its control socket and its stdio's near ends."""
    ctl, io, err = (socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM) for _ in range(3))
    body = {'op': 'exec', 'argv': argv, 'env': env or ENV, 'cwd': cwd or self.dir.name}
    socket.send_fds(self.sock, [json.dumps(body).encode()], [ctl[1].fileno(), io[1].fileno(), err[1].fileno()])
    for s in (ctl[1], io[1], err[1]): s.close()
    return Exec(ctl[0], io[0], err[0])

  def run(self, argv, cwd=None, env=None):
    """Starts a unary command (one connection); returns its control socket."""
    ctl, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    body = {'op': 'run', 'argv': argv, 'env': env or ENV, 'cwd': cwd or self.dir.name}
    socket.send_fds(self.sock, [json.dumps(body).encode()], [theirs.fileno()])
    theirs.close()
    ctl.settimeout(10)
    return ctl

  def close(self):
    self.sock.close()
    os.waitpid(self.pid, 0)
    self.dir.cleanup()


class Exec:
  def __init__(self, ctl, io, err):
    self.ctl, self.io, self.err = ctl, io, err
    self.ctl.settimeout(10)
    self.buf = b''

  def reply(self):
    while b'\n' not in self.buf:
      chunk = self.ctl.recv(4096)
      if not chunk: raise EOFError('ctl closed')
      self.buf += chunk
    line, self.buf = self.buf.split(b'\n', 1)
    return json.loads(line)

  def drain(self, s):
    s.settimeout(10)
    out = b''
    while True:
      chunk = s.recv(65536)
      if not chunk: return out
      out += chunk

  def result(self):
    self.io.shutdown(socket.SHUT_WR)
    out, err = self.drain(self.io), self.drain(self.err)
    first = self.reply()
    last = first if 'exit' in first else self.reply()
    return first, last, out, err


class Spawner(unittest.TestCase):
  def test_the_daemon_under_test_is_the_checkout_s(self):
    self.assertEqual(os.path.commonpath([execd.__file__, os.path.normpath(SUPERVISOR_DIR)]), os.path.normpath(SUPERVISOR_DIR))

  def setUp(self):
    self.d = Daemon()
    self.addCleanup(self.d.close)

  def test_commands_run_as_children_of_one_spawner_that_joined_the_cpu_cgroup_once(self):
    results = [self.d.exec(['sh', '-c', 'echo $PPID; pwd; echo oops >&2; exit 3'], cwd='/').result() for _ in range(3)]
    spawners = self.d.spawners()
    self.assertEqual(len(spawners), 1)
    for first, last, out, err in results:
      self.assertEqual(first['started'], True)
      self.assertEqual(last, {'exit': 3, 'signal': None})
      self.assertEqual(out.decode().split('\n'), [str(spawners[0]), '/', ''])
      self.assertEqual(err, b'oops\n')
    # One join for every command: the move into a v1 cgroup (an RCU grace period) is not per exec.
    with open(self.d.cpu) as f: self.assertEqual(f.read(), '0')

  def test_stdin_reaches_the_command_and_only_stdio_is_open_in_it(self):
    e = self.d.exec(['sh', '-c', 'cat; ls /proc/self/fd'])
    e.io.sendall(b'hello\n')
    _, last, out, _ = e.result()
    self.assertEqual(last['exit'], 0)
    lines = out.decode().split('\n')
    self.assertEqual(lines[0], 'hello')
    # 0, 1, 2 and the fd ls itself opens: nothing of the daemon's or the spawner's.
    self.assertEqual(len([x for x in lines[1:] if x]), 4)

  def test_a_command_that_cannot_be_executed_is_127_with_the_reason_on_stderr(self):
    path = os.path.join(self.d.dir.name, 'not-executable')
    with open(path, 'w') as f: f.write('#!/bin/sh\n')
    first, last, _, err = self.d.exec([path]).result()
    self.assertEqual(first['exit'], 127)
    self.assertIn('Permission denied', first['error'])
    self.assertIn(b'paddock: cannot run', err)
    # The spawner serves on.
    self.assertEqual(self.d.exec(['true']).result()[1], {'exit': 0, 'signal': None})

  def test_a_large_request_then_a_small_one_are_each_read_whole_and_alone(self):
    # The daemon and its spawner receive every message into one buffer of their own: a short
    # message after a long one must not read the long one's leftovers.
    big = 'x' * (100 * 1024)
    first, last, out, _ = self.d.exec(['sh', '-c', 'printf %s "$BIG" | wc -c'], env=dict(ENV, BIG=big)).result()
    self.assertEqual((first['started'], last['exit'], out), (True, 0, b'%d\n' % len(big)))
    _, last, out, _ = self.d.exec(['sh', '-c', 'echo "[$BIG]"']).result()
    self.assertEqual((last['exit'], out), (0, b'[]\n'))

  def test_a_kill_reaches_the_command_s_process_group(self):
    e = self.d.exec(['sleep', '30'])
    self.assertEqual(e.reply()['started'], True)
    e.ctl.sendall(b'{"kill": "SIGTERM"}\n')
    self.assertEqual(e.reply(), {'exit': None, 'signal': 'SIGTERM'})

  def test_a_killed_spawner_fails_its_running_commands_and_is_replaced(self):
    e = self.d.exec(['sleep', '30'])
    pid = e.reply()['pid']
    first = self.d.spawners()
    os.kill(first[0], signal.SIGKILL)
    self.assertEqual(e.reply(), {'exit': None, 'signal': 'SIGKILL', 'error': 'the process that ran the command went away'})
    # Its command was killed with it, not left running unreported.
    self.assertTrue(gone(pid))
    self.assertEqual(self.d.exec(['true']).result()[1], {'exit': 0, 'signal': None})
    second = self.d.spawners()
    self.assertEqual(len(second), 1)
    self.assertNotEqual(second, first)


  def test_a_caller_gone_before_its_failure_is_written_does_not_kill_the_spawner(self):
    self.assertEqual(self.d.exec(['true']).result()[1], {'exit': 0, 'signal': None})
    first = self.d.spawners()
    self.assertEqual(len(first), 1)
    path = os.path.join(self.d.dir.name, 'not-executable')
    with open(path, 'w') as f: f.write('#!/bin/sh\n')
    e = self.d.exec([path])
    # Its stderr is gone: the spawner's message to it meets EPIPE (a SIGPIPE, were it not ignored).
    e.err.close()
    self.assertEqual(e.reply()['exit'], 127)
    self.assertEqual(self.d.exec(['true']).result()[1], {'exit': 0, 'signal': None})
    self.assertEqual(self.d.spawners(), first)


def frames(ctl):
  """A unary command's frames until its end: (stdout, stderr, exit, sizes of the output frames)."""
  buf, out, err, sizes = b'', b'', b'', []
  while True:
    while len(buf) < 5 or len(buf) < 5 + int.from_bytes(buf[1:5], 'big'):
      chunk = ctl.recv(1 << 20)
      if not chunk: raise EOFError('ctl closed before the end frame')
      buf += chunk
    kind, n = buf[:1], int.from_bytes(buf[1:5], 'big')
    data, buf = buf[5:5 + n], buf[5 + n:]
    if kind == b'x':
      # The last frame: nothing follows it, and the daemon closes the connection.
      if buf or ctl.recv(1): raise AssertionError('bytes after the end frame')
      return out, err, json.loads(data), sizes
    sizes.append(n)
    if kind == b'o': out += data
    elif kind == b'e': err += data
    else: raise AssertionError('unknown frame %r' % kind)


class Unary(unittest.TestCase):
  def setUp(self):
    self.d = Daemon()
    self.addCleanup(self.d.close)

  def test_output_and_status_come_back_on_the_one_connection(self):
    out, err, end, _ = frames(self.d.run(['sh', '-c', 'echo out; echo oops >&2; exit 3'], cwd='/'))
    self.assertEqual((out, err, end), (b'out\n', b'oops\n', {'exit': 3, 'signal': None}))
    # Run by the spawner, like the streaming path's commands.
    self.assertEqual(len(self.d.spawners()), 1)

  def test_stdin_is_empty_and_only_stdio_is_open_in_the_command(self):
    out, _, end, _ = frames(self.d.run(['sh', '-c', 'cat; ls /proc/self/fd']))
    self.assertEqual(end['exit'], 0)
    self.assertEqual(len([x for x in out.decode().split('\n') if x]), 4)

  def test_a_command_that_cannot_be_executed_is_127_with_the_reason_on_stderr(self):
    path = os.path.join(self.d.dir.name, 'not-executable')
    with open(path, 'w') as f: f.write('#!/bin/sh\n')
    _, err, end, _ = frames(self.d.run([path]))
    self.assertEqual(end['exit'], 127)
    self.assertIn('Permission denied', end['error'])
    self.assertIn(b'paddock: cannot run', err)
    out, _, end, _ = frames(self.d.run(['echo', 'next']))
    self.assertEqual((out, end), (b'next\n', {'exit': 0, 'signal': None}))

  def test_large_output_is_relayed_whole_in_bounded_pieces(self):
    out, err, end, sizes = frames(self.d.run(['sh', '-c', 'head -c 3000000 /dev/zero; head -c 70000 /dev/zero >&2']))
    self.assertEqual((len(out), len(err), end['exit']), (3000000, 70000, 0))
    self.assertLessEqual(max(sizes), execd.RELAY_CHUNK)

  def test_a_background_process_holding_stdout_is_cut_after_the_exit(self):
    t0 = time.monotonic()
    out, _, end, _ = frames(self.d.run(['sh', '-c', 'sleep 30 & echo hi']))
    took = time.monotonic() - t0
    self.assertEqual((out, end), (b'hi\n', {'exit': 0, 'signal': None}))
    self.assertGreaterEqual(took, execd.CUT_AFTER_EXIT_S * 0.9)
    self.assertLess(took, 10)

  def running(self):
    # Until the spawner has the command as its child (a loaded machine may take a while).
    deadline = time.time() + 10
    while time.time() < deadline:
      spawners = self.d.spawners()
      if spawners and children(spawners[0]): return
      time.sleep(0.01)
    self.fail('the command never started')

  def test_a_kill_on_the_control_socket_reaches_the_command(self):
    ctl = self.d.run(['sleep', '30'])
    self.running()
    ctl.sendall(b'{"kill": "SIGTERM"}\n')
    self.assertEqual(frames(ctl)[2], {'exit': None, 'signal': 'SIGTERM'})

  def test_a_caller_gone_takes_its_command_with_it_and_the_daemon_serves_on(self):
    marker = os.path.join(self.d.dir.name, 'pid')
    ctl = self.d.run(['sh', '-c', 'echo $$ > %s; exec sleep 30' % marker])
    deadline = time.time() + 5
    while not (os.path.exists(marker) and open(marker).read().strip()) and time.time() < deadline: time.sleep(0.01)
    pid = int(open(marker).read())
    ctl.close()
    self.assertTrue(gone(pid))
    self.assertEqual(frames(self.d.run(['true']))[2], {'exit': 0, 'signal': None})
    # Nothing of the unary commands is left open in the daemon: its request socket, the cpu
    # cgroup's descriptor, the spawner's pidfd and order socket (0..2 are the test's own).
    deadline = time.time() + 5
    while len(os.listdir('/proc/%d/fd' % self.d.pid)) != 3 + 4 and time.time() < deadline: time.sleep(0.01)
    self.assertEqual(len(os.listdir('/proc/%d/fd' % self.d.pid)), 3 + 4)

  def test_a_killed_spawner_fails_its_unary_command(self):
    ctl = self.d.run(['sleep', '30'])
    self.running()
    os.kill(self.d.spawners()[0], signal.SIGKILL)
    end = frames(ctl)[2]
    # Killed with it once the daemon had its pid; 127 when the spawner went before saying which pid
    # it started (on a loaded machine): a failure naming the cause either way.
    self.assertIn((end['exit'], end['signal']), [(None, 'SIGKILL'), (127, None)])
    self.assertEqual(end['error'], 'the process that ran the command went away')
    self.assertEqual(frames(self.d.run(['true']))[2], {'exit': 0, 'signal': None})


def refusal(ctl):
  """The one line a refused request gets, then the connection closes."""
  buf = b''
  while True:
    chunk = ctl.recv(4096)
    if not chunk: break
    buf += chunk
  line, rest = buf.split(b'\n', 1)
  if rest: raise AssertionError('bytes after the refusal: %r' % rest)
  return json.loads(line)


class OwnSocket(unittest.TestCase):
  """The daemon's own socket (exec.sock): the runner's unary execs, without the supervisor."""

  def setUp(self):
    self.d = Daemon(listen=True)
    self.addCleanup(self.d.close)

  def test_a_command_without_stdin_is_served_on_it_as_on_the_supervisor_s_hand_over(self):
    ctl = self.d.connect({'op': 'run', 'argv': ['sh', '-c', 'echo out; echo oops >&2; pwd; exit 3'], 'env': ENV})
    out, err, end, _ = frames(ctl)
    # No cwd given: the daemon's own (the sandbox's exec cwd).
    self.assertEqual((out, err, end), (b'out\n' + self.d.dir.name.encode() + b'\n', b'oops\n', {'exit': 3, 'signal': None}))
    # Run by the spawner, like every other command.
    self.assertEqual(len(self.d.spawners()), 1)
    # A kill line after the request reaches the command, as on the handed-over path.
    ctl = self.d.connect({'op': 'run', 'argv': ['sleep', '30'], 'env': ENV, 'cwd': '/'})
    deadline = time.time() + 10
    while not children(self.d.spawners()[0]) and time.time() < deadline: time.sleep(0.01)
    ctl.sendall(b'{"kill": "SIGTERM"}\n')
    self.assertEqual(frames(ctl)[2], {'exit': None, 'signal': 'SIGTERM'})

  def test_neither_the_socket_nor_the_spare_descriptor_reaches_a_command(self):
    out, _, end, _ = frames(self.d.connect({'op': 'run', 'argv': ['sh', '-c', 'ls /proc/self/fd'], 'env': ENV}))
    self.assertEqual(end['exit'], 0)
    # 0..2 and the directory ls reads.
    self.assertEqual(len([x for x in out.decode().split('\n') if x]), 4)

  def test_a_request_line_that_arrives_in_pieces_is_read_whole(self):
    line = json.dumps({'op': 'run', 'argv': ['echo', 'whole'], 'env': ENV}).encode() + b'\n'
    ctl = self.d.connect(line[:7])
    time.sleep(0.1)
    ctl.sendall(line[7:])
    self.assertEqual(frames(ctl)[:3], (b'whole\n', b'', {'exit': 0, 'signal': None}))

  def test_anything_but_a_primary_command_is_refused_before_it_runs(self):
    marker = os.path.join(self.d.dir.name, 'ran')
    touch = ['sh', '-c', 'touch %s' % marker]
    for body in (
      {'op': 'exec', 'argv': touch, 'env': ENV},
      {'op': 'file', 'argv': touch, 'env': ENV},
      {'op': 'run', 'argv': touch, 'env': ENV, 'container': 'side'},
      {'op': 'run', 'argv': 'touch', 'env': ENV},
      {'op': 'run', 'argv': [], 'env': ENV},
      {'op': 'run', 'argv': touch, 'env': {'PATH': 1}},
      {'op': 'run', 'argv': touch, 'env': ENV, 'cwd': 5},
      b'not json\n',
      b'"a string"\n',
    ):
      reply = refusal(self.d.connect(body))
      self.assertEqual((reply['ok'], reply['errno']), (False, 'EUNARY'), body)
    # A request line longer than the socket takes (the runner sends those to the supervisor):
    # closed unread (the kernel may then reset the connection before the refusal is read).
    ctl = self.d.connect(json.dumps({'op': 'run', 'argv': touch, 'env': {'PAD': 'x' * MAX_REQUEST_LINE}}).encode() + b'\n')
    try: refusal(ctl)
    except ConnectionResetError: pass
    self.assertFalse(os.path.exists(marker))
    # And it serves on.
    self.assertEqual(frames(self.d.connect({'op': 'run', 'argv': ['true'], 'env': ENV}))[2], {'exit': 0, 'signal': None})

  def test_a_connection_that_goes_before_its_request_costs_nothing(self):
    ctl = self.d.connect(b'{"op": "ru')
    ctl.close()
    self.assertEqual(frames(self.d.connect({'op': 'run', 'argv': ['true'], 'env': ENV}))[2], {'exit': 0, 'signal': None})
    # Nothing of it is left open in the daemon: its request socket, the cpu cgroup's descriptor,
    # its own socket, the spare descriptor, the spawner's pidfd and order socket.
    deadline = time.time() + 5
    while len(os.listdir('/proc/%d/fd' % self.d.pid)) != 3 + 6 and time.time() < deadline: time.sleep(0.01)
    self.assertEqual(len(os.listdir('/proc/%d/fd' % self.d.pid)), 3 + 6)


class OwnSocketOutOfDescriptors(unittest.TestCase):
  def test_a_daemon_at_its_open_files_limit_refuses_and_then_serves_again(self):
    # 24 descriptors: the daemon's own dozen, then a few commands' (each holds a control socket
    # and two stream pairs' ends) until none is left.
    d = Daemon(listen=True, nofile=24)
    self.addCleanup(d.close)
    held, refused = [], None
    for _ in range(20):
      ctl = d.connect({'op': 'run', 'argv': ['sleep', '30'], 'env': ENV})
      ctl.settimeout(0.5)
      try: first = ctl.recv(1, socket.MSG_PEEK)
      except socket.timeout:
        held.append(ctl)
        continue
      ctl.settimeout(10)
      self.assertEqual(first, b'{')
      refused = refusal(ctl)
      break
    self.assertIsNotNone(refused, 'never ran out of descriptors')
    self.assertEqual(refused['errno'], 'EUNARY')
    self.assertGreater(len(held), 0)
    # The daemon is still there, and once its callers go (their commands with them) it runs the next one.
    for ctl in held: ctl.close()
    deadline = time.time() + 10
    while time.time() < deadline:
      ctl = d.connect({'op': 'run', 'argv': ['true'], 'env': ENV})
      first = ctl.recv(1, socket.MSG_PEEK)
      if first == b'x':
        self.assertEqual(frames(ctl)[2], {'exit': 0, 'signal': None})
        return
      refusal(ctl)
      time.sleep(0.05)
    self.fail('the daemon never served again')


class WarmUp(unittest.TestCase):
  def warmed_up(self, d):
    """Waits for the daemon's warm-up, then checks it ran nothing and left nothing open."""
    spawner = None
    # The warm-up's order moves the spawner to the daemon's working directory (the test's is another).
    deadline = time.time() + 5
    while time.time() < deadline:
      found = d.spawners()
      if found and os.readlink('/proc/%d/cwd' % found[0]) == d.dir.name:
        spawner = found[0]
        break
      time.sleep(0.02)
    self.assertIsNotNone(spawner)
    time.sleep(0.1)
    # Nothing ran, nothing is left open: no child of the spawner, and the daemon holds only its
    # request socket, the cpu cgroup's descriptor (it forks the next spawner with it), the
    # spawner's pidfd and the order socket (0..2 are the test's own).
    self.assertEqual(children(spawner), [])
    self.assertEqual(len(os.listdir('/proc/%d/fd' % d.pid)), 3 + 4)
    self.assertEqual(d.exec(['true']).result()[1], {'exit': 0, 'signal': None})
    self.assertEqual(d.spawners(), [spawner])

  def test_an_idle_daemon_runs_its_exec_path_once_and_leaves_nothing_behind(self):
    d = Daemon()
    self.addCleanup(d.close)
    self.warmed_up(d)

  def test_a_first_exec_that_names_a_path_leaves_the_warm_up_to_run(self):
    # The runner primes a warm pool's sandbox with an exec of a path that cannot run: no PATH
    # lookup happened, so the daemon still warms up once it idles (its order moves the spawner
    # from that exec's working directory to the daemon's own).
    d = Daemon()
    self.addCleanup(d.close)
    first, _, _, err = d.exec([execd.WARM_UP_EXE], cwd='/').result()
    self.assertEqual(first['exit'], 127)
    self.assertIn(b'paddock: cannot run', err)
    self.warmed_up(d)


class SpawnerOutsideItsCgroup(unittest.TestCase):
  def test_a_spawner_that_could_not_join_the_cpu_cgroup_runs_nothing(self):
    d = Daemon(cpu_mode='r')
    self.addCleanup(d.close)
    first, _, out, err = d.exec(['echo', 'ran']).result()
    self.assertEqual(first['exit'], 127)
    self.assertIn("cannot join the sandbox's cpu cgroup", first['error'])
    self.assertEqual(out, b'')
    self.assertIn(b'cannot join', err)


if __name__ == '__main__':
  unittest.main()
