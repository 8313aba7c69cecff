"""One TCP connection into a sandbox, relayed over a Unix socket of the supervisor.

The handler (a forked child of the supervisor) enters only the sandbox's network namespace,
connects to the port on the sandbox's own loopback, drops to the sandbox user, and then copies
bytes both ways until both directions are closed. This works the same for a sandbox without
egress (bwrap's own namespace, unreachable from the host) as for one with its own link: nothing
is routed into the sandbox, the connection starts inside it.
"""
import ctypes, os, select, socket

from paddock_supervisor.launch import CLONE_NEWNET
from paddock_supervisor.sysutil import drop_to_host_user, libc, send_line

CHUNK = 256 * 1024


def enter_net(init_pid):
  fd = os.open('/proc/%d/ns/net' % init_pid, os.O_RDONLY)
  try:
    if libc.setns(fd, CLONE_NEWNET) != 0:
      e = ctypes.get_errno()
      raise OSError(e, 'setns net: %s' % os.strerror(e))
  finally:
    os.close(fd)


def connect_loopback(port, timeout=5.0):
  last = None
  for family, addr in ((socket.AF_INET, ('127.0.0.1', port)), (socket.AF_INET6, ('::1', port))):
    s = socket.socket(family, socket.SOCK_STREAM)
    s.settimeout(timeout)
    try:
      s.connect(addr)
      s.settimeout(None)
      s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
      return s
    except OSError as e:
      last = e
      s.close()
  raise last


def relay_handler(p, init_pid, conn, port):
  enter_net(init_pid)
  try:
    tcp = connect_loopback(port)
  except OSError as e:
    send_line(conn, {'ok': False, 'errno': 'ECONNREFUSED', 'message': 'nothing accepts connections on port %d in the sandbox: %s' % (port, e.strerror or e)})
    return
  drop_to_host_user(p)
  send_line(conn, {'ok': True})
  pump(conn, tcp)


def pump(client, tcp):
  # Both directions. The client's EOF is passed on as a half-close (a request may be followed by
  # reading the whole answer); the sandbox's EOF ends the connection, so a sandbox that goes away
  # never leaves this handler waiting on its caller.
  peers = {client.fileno(): (client, tcp), tcp.fileno(): (tcp, client)}
  poller = select.poll()
  for fd in peers: poller.register(fd, select.POLLIN)
  while True:
    for fd, _ in poller.poll():
      src, dst = peers[fd]
      try: data = src.recv(CHUNK)
      except OSError: data = b''
      if data:
        try:
          dst.sendall(data)
          continue
        except OSError:
          return
      if src is tcp:
        try: client.shutdown(socket.SHUT_WR)
        except OSError: pass
        return
      poller.unregister(fd)
      try: tcp.shutdown(socket.SHUT_WR)
      except OSError: pass
