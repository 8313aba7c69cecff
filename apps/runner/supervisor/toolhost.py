# The runner's tool host: a small Python 3 program (stdlib only) that runs the host tools of the
# launch path (`ip`, which builds and removes sandbox links) on the runner's behalf.
#
# Why: a fork copies the forking process's page tables, so each tool the runner's own Node process
# started cost it 4.7 ms (p50; 8.6 ms p90, 30 ms at worst) with 230 MB resident, during which its
# event loop served nothing: about three runs per sandbox (two to build its link, one to remove
# it), so a burst of creates, or the refill of a warm pool, stalled the creates and execs in
# flight. This process is small, forks with vfork (subprocess does when it can), and does it off
# the runner's thread; the runner only writes a line to a pipe.
#
# Protocol: one JSON request per line on stdin, {"id": n, "argv": [...], "input": "..."}; one JSON
# answer per line on stdout, {"id": n, "code": exit status or -signal, "out": "...", "err": "..."}
# (or {"id": n, "error": "..."} when the tool could not be started), in the order the tools end:
# each runs in a thread of its own, as concurrently as the runner's own spawns ran. Only the runner
# writes to stdin (a pipe it holds), so requests are trusted; a malformed line is answered with an
# error all the same, never a crash. The process ends when stdin ends: the runner went away.

import json, os, subprocess, sys, threading

ENV = {'PATH': '/usr/sbin:/usr/bin:/sbin:/bin', 'LC_ALL': 'C'}
out_lock = threading.Lock()


def answer(msg):
  line = (json.dumps(msg) + '\n').encode()
  with out_lock:
    try:
      sys.stdout.buffer.write(line)
      sys.stdout.buffer.flush()
    except BrokenPipeError:
      os._exit(0)


def run(req_id, argv, data):
  try:
    p = subprocess.run(argv, input=data, capture_output=True, env=ENV, cwd='/', close_fds=True)
  except OSError as e:
    answer({'id': req_id, 'error': '%s: %s' % (argv[0], e.strerror or e)})
    return
  answer({'id': req_id, 'code': p.returncode, 'out': p.stdout.decode('utf-8', 'replace'), 'err': p.stderr.decode('utf-8', 'replace')})


def main():
  for raw in sys.stdin.buffer:
    req_id = None
    try:
      req = json.loads(raw)
      req_id = req['id']
      argv, data = req['argv'], req.get('input', '')
      if not isinstance(argv, list) or not argv or not all(isinstance(a, str) for a in argv) or not isinstance(data, str):
        raise ValueError('argv must be a non-empty list of strings, input a string')
    except (ValueError, KeyError, TypeError) as e:
      answer({'id': req_id, 'error': 'bad request: %s' % e})
      continue
    threading.Thread(target=run, args=(req_id, argv, data.encode()), daemon=True).start()
  # The runner is gone: tools still running finish on their own (they are short), their answers
  # have nobody to go to.
  os._exit(0)


if __name__ == '__main__':
  main()
