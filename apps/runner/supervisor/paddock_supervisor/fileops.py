"""File requests (read, write, list, stat, remove), answered on a request's socket, already inside the sandbox."""
import errno, os, shutil, stat

from paddock_supervisor.sysutil import send_line

def entry(path, name=None):
  st = os.lstat(path)
  kind = 'directory' if stat.S_ISDIR(st.st_mode) else 'file' if stat.S_ISREG(st.st_mode) else 'symlink' if stat.S_ISLNK(st.st_mode) else 'other'
  return {'path': path, 'type': kind, 'size': st.st_size, 'mode': stat.S_IMODE(st.st_mode), 'mtime': st.st_mtime}

def file_ops(conn, req):
  action, path = req['action'], req['path']
  try:
    if action == 'read':
      fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
      st = os.fstat(fd)
      if stat.S_ISDIR(st.st_mode): raise IsADirectoryError(errno.EISDIR, 'is a directory', path)
      send_line(conn, {'ok': True, 'size': st.st_size})
      while True:
        data = os.read(fd, 262144)
        if not data: break
        conn.sendall(data)
      os.close(fd)
      return
    if action == 'write':
      error = None
      fd = None
      try:
        parent = os.path.dirname(path)
        if parent: os.makedirs(parent, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, req.get('mode', 0o644))
        if 'mode' in req: os.fchmod(fd, req['mode'])
      except OSError as e:
        error = e
      total = 0
      while True:
        data = conn.recv(262144)
        if not data: break
        if fd is not None and error is None:
          try:
            view = memoryview(data)
            while view:
              n = os.write(fd, view)
              view = view[n:]
            total += len(data)
          except OSError as e:
            error = e
      if fd is not None: os.close(fd)
      if error is not None: raise error
      send_line(conn, {'ok': True, 'bytes': total})
      return
    if action == 'list':
      out = [entry(os.path.join(path, n)) for n in sorted(os.listdir(path))]
      send_line(conn, {'ok': True, 'entries': out})
      return
    if action == 'stat':
      send_line(conn, {'ok': True, 'entry': entry(path)})
      return
    if action == 'remove':
      st = os.lstat(path)
      if stat.S_ISDIR(st.st_mode):
        if req.get('recursive'): shutil.rmtree(path)
        else: os.rmdir(path)
      else:
        os.unlink(path)
      send_line(conn, {'ok': True})
      return
    send_line(conn, {'ok': False, 'errno': 'EINVAL', 'message': 'unknown file action ' + str(action)})
  except OSError as e:
    send_line(conn, {'ok': False, 'errno': errno.errorcode.get(e.errno, 'EIO'), 'message': e.strerror or str(e)})
