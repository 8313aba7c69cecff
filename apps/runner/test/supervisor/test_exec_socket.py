import errno, os, socket, tempfile, unittest

from support import SUPERVISOR_DIR
import supervisor


def connect(path):
  c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
  try:
    # A deep directory is reached through its descriptor, as the runner does (socket-io.ts).
    if len(path.encode()) > 100:
      dfd = os.open(os.path.dirname(path), os.O_RDONLY | os.O_DIRECTORY)
      try: c.connect('/proc/self/fd/%d/%s' % (dfd, os.path.basename(path)))
      finally: os.close(dfd)
    else:
      c.connect(path)
    return c
  except OSError:
    c.close()
    raise


class ExecDaemonSocketGate(unittest.TestCase):
  """The supervisor's gate on the exec daemon's own socket: where a connect lands, or fails."""

  def setUp(self):
    tmp = tempfile.TemporaryDirectory()
    self.addCleanup(tmp.cleanup)
    # Deeper than sockaddr_un's 108 bytes, as a runner's state directory may be.
    self.dir = os.path.join(tmp.name, *(['d' * 40] * 3))
    os.makedirs(self.dir)
    self.s = supervisor.ExecDaemonSocket(self.dir)
    self.path = os.path.join(self.dir, 'exec.sock')
    self.daemons = []

  def test_the_supervisor_under_test_is_the_checkout_s(self):
    self.assertEqual(os.path.dirname(supervisor.__file__), os.path.normpath(SUPERVISOR_DIR))

  def tearDown(self):
    for d in self.daemons: d.close()

  def start(self):
    """As start_execd: bound, a copy for the daemon (the fork), published; the supervisor keeps none."""
    listener = self.s.bind()
    # Not reachable until the daemon runs: nothing there yet, or a gone daemon's socket.
    with self.assertRaises((FileNotFoundError, ConnectionRefusedError)): connect(self.path).close()
    daemon = listener.dup()
    self.daemons.append(daemon)
    self.s.publish(listener)
    self.assertEqual(listener.fileno(), -1)
    return daemon

  def assert_refused(self, code):
    with self.assertRaises(OSError) as e: connect(self.path).close()
    self.assertEqual(e.exception.errno, code)

  def test_a_published_socket_reaches_the_daemon_and_only_it(self):
    daemon = self.start()
    c = connect(self.path)
    conn, _ = daemon.accept()
    c.sendall(b'hello')
    self.assertEqual(conn.recv(5), b'hello')
    for x in (c, conn): x.close()
    self.assertEqual(os.stat(self.path).st_mode & 0o777, 0o600)

  def test_paused_it_is_not_found_and_resumed_it_is_again(self):
    daemon = self.start()
    self.s.close_gate()
    self.assert_refused(errno.ENOENT)
    self.s.open_gate()
    c = connect(self.path)
    daemon.accept()[0].close()
    c.close()

  def test_a_gone_daemon_refuses_and_the_next_one_replaces_its_socket(self):
    self.start().close()
    self.assert_refused(errno.ECONNREFUSED)
    daemon = self.start()
    c = connect(self.path)
    daemon.accept()[0].close()
    c.close()

  def test_stopped_nothing_is_left(self):
    self.start()
    self.s.close_gate()
    self.s.bind().close()
    self.s.remove()
    self.assertEqual(os.listdir(self.dir), [])
    # Removing twice, or what was never there, is no error.
    self.s.remove()
    self.s.open_gate()
    self.assertEqual(os.listdir(self.dir), [])


if __name__ == '__main__':
  unittest.main()
