"""Looks for given values everywhere a sandbox can read: every process's environ, cmdline, open
regular files and mount table, and the files of its filesystem. Run inside a sandbox.

argv[1] is a JSON object: {"needles": {name: base64 of the value reversed}, "absent": [paths],
"since": unix seconds}. The values are encoded so that neither this command line nor any file
the test wrote holds them in clear. The host's read-only /usr is large (gigabytes) and written by
no Paddock process: only its files changed since `since` are read; every other mount is read
whole (files up to 4 MiB). Prints one JSON object: hits, counts of what was read, unreadable.
"""
import base64, json, os, stat, sys

MAX_FILE = 4 << 20
SKIP_TREES = ('/proc', '/sys')

cfg = json.loads(sys.argv[1])
needles = {k: base64.b64decode(v)[::-1] for k, v in cfg['needles'].items()}
since = float(cfg['since'])
hits, unreadable = [], []
counts = {'environ': 0, 'cmdline': 0, 'fds': 0, 'files': 0, 'bytes': 0}


def check(where, data):
  counts['bytes'] += len(data)
  for name, value in needles.items():
    if value in data: hits.append({'needle': name, 'where': where})


def read(path, limit=MAX_FILE):
  with open(path, 'rb') as f: return f.read(limit)


for pid in sorted((p for p in os.listdir('/proc') if p.isdigit()), key=int):
  if pid == str(os.getpid()): continue
  for what in ('environ', 'cmdline', 'mountinfo'):
    try:
      check('/proc/%s/%s' % (pid, what), read('/proc/%s/%s' % (pid, what)))
      if what in counts: counts[what] += 1
    except OSError as e:
      unreadable.append('/proc/%s/%s: %s' % (pid, what, e.strerror))
  try: fds = os.listdir('/proc/%s/fd' % pid)
  except OSError as e:
    unreadable.append('/proc/%s/fd: %s' % (pid, e.strerror)); fds = []
  for fd in fds:
    path = '/proc/%s/fd/%s' % (pid, fd)
    try:
      if not stat.S_ISREG(os.stat(path).st_mode): continue
      check(path, read(path))
      counts['fds'] += 1
    except OSError:
      pass  # gone meanwhile, or a pipe/socket

for root, dirs, files in os.walk('/'):
  if root in SKIP_TREES:
    dirs[:] = []
    continue
  for name in files:
    path = os.path.join(root, name)
    try:
      st = os.lstat(path)
      if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_FILE: continue
      if (path + '/').startswith('/usr/') and max(st.st_mtime, st.st_ctime) < since: continue
      check(path, read(path))
      counts['files'] += 1
    except OSError:
      pass  # not readable by the sandbox user: nothing a sandbox can see
present = [p for p in cfg['absent'] if os.path.lexists(p)]
print(json.dumps({'hits': hits, 'counts': counts, 'unreadable': unreadable, 'present': present}))
