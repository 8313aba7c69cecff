import os, select, socket, tempfile, types, unittest

from support import SUPERVISOR_DIR
import supervisor


class Listener:
  """The request-reading half of a Supervisor on a real listening socket: `handled` collects the
  header line of each connection it reads, with the connection."""

  def __init__(self):
    self.dir = tempfile.TemporaryDirectory()
    self.path = os.path.join(self.dir.name, 'sup.sock')
    lsock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    lsock.bind(self.path)
    lsock.listen(16)
    lsock.setblocking(False)
    self.handled = []
    self.sup = types.SimpleNamespace(lsock=lsock, pending={}, handle=lambda req, conn: self.handled.append((req, conn)))
    self.sup.read_header = types.MethodType(supervisor.Supervisor.read_header, self.sup)
    self.poller = select.poll()

  def connect(self, first=b''):
    c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    c.connect(self.path)
    if first: c.sendall(first)
    return c

  def accept(self):
    supervisor.Supervisor.accept(self.sup, self.poller)

  def close(self):
    for _, conn in self.handled: conn.close()
    for conn in self.sup.pending.values(): conn.close()
    self.sup.lsock.close()
    self.dir.cleanup()


class Requests(unittest.TestCase):
  def test_the_supervisor_under_test_is_the_checkout_s(self):
    self.assertEqual(os.path.dirname(supervisor.__file__), os.path.normpath(SUPERVISOR_DIR))

  def setUp(self):
    self.l = Listener()
    self.addCleanup(self.l.close)

  def test_a_header_already_there_is_read_at_accept_and_the_rest_stays_for_the_command(self):
    c = self.l.connect(b'{"op": "attach", "role": "io", "id": "x"}\nstdin bytes')
    self.l.accept()
    self.assertEqual([req for req, _ in self.l.handled], [{'op': 'attach', 'role': 'io', 'id': 'x'}])
    self.assertEqual(self.l.sup.pending, {})
    # Nothing waits in the poller for it.
    self.assertEqual(self.l.poller.poll(0), [])
    self.assertEqual(self.l.handled[0][1].recv(100), b'stdin bytes')
    c.close()

  def test_a_header_still_to_come_waits_in_the_poller_then_is_read_and_leaves_it(self):
    c = self.l.connect()
    self.l.accept()
    self.assertEqual(self.l.handled, [])
    [fd] = self.l.sup.pending
    c.sendall(b'{"op": "ping"}')
    self.assertEqual(self.l.poller.poll(1000), [(fd, select.POLLIN)])
    # Half a line: it waits on.
    self.assertFalse(self.l.sup.read_header(fd, self.l.poller))
    c.sendall(b'\n')
    self.assertTrue(self.l.sup.read_header(fd, self.l.poller))
    self.assertEqual([req for req, _ in self.l.handled], [{'op': 'ping'}])
    self.assertEqual(self.l.sup.pending, {})
    with self.assertRaises(KeyError): self.l.poller.unregister(fd)
    c.close()

  def test_a_connection_closed_without_a_header_or_sending_garbage_is_dropped(self):
    quiet = self.l.connect()
    quiet.close()
    garbage = self.l.connect(b'not json\n')
    self.l.accept()
    self.assertEqual(self.l.handled, [])
    self.assertEqual(self.l.sup.pending, {})
    self.assertEqual(self.l.poller.poll(0), [])
    # Its connection was closed: the client reads the end.
    garbage.settimeout(5)
    self.assertEqual(garbage.recv(10), b'')
    garbage.close()

  def test_a_caller_gone_after_half_a_header_is_dropped_not_polled_for_ever(self):
    # Its hang-up is reported on every poll: the half line must not be waited for again.
    c = self.l.connect(b'{"op": "pi')
    self.l.accept()
    [fd] = self.l.sup.pending
    c.close()
    [(polled, ev)] = self.l.poller.poll(1000)
    self.assertEqual(polled, fd)
    self.assertTrue(ev & select.POLLHUP)
    self.assertTrue(self.l.sup.read_header(fd, self.l.poller, True))
    self.assertEqual((self.l.handled, self.l.sup.pending, self.l.poller.poll(0)), ([], {}, []))


if __name__ == '__main__':
  unittest.main()
