"""The primary container's startup probe: a command run inside it until it exits 0.

The sandbox stays CREATING while it probes; `failureThreshold` failures (a non-zero exit, or no
exit within `timeoutMs`, which kills the probe) make it FAILED with the probe's last result.
"""
import os, signal


class StartupProbe:
  def __init__(self, spec, spawn):
    # spawn() starts one probe run inside the primary and returns its host pid (a process group leader).
    self.s = spec
    self.spawn = spawn
    self.failures = 0
    self.pid = None
    self.started = None
    self.killed = False
    self.next_at = None
    self.last = 'never ran'

  def begin(self, now):
    self.next_at = now + self.s['initialDelayMs'] / 1000.0

  def tick(self, now):
    """'passed', 'failed' or None (still probing)."""
    if self.next_at is None: return None
    if self.pid is not None:
      try: done, status = os.waitpid(self.pid, os.WNOHANG)
      except ChildProcessError: done, status = self.pid, 256 * 126
      if done:
        code = os.waitstatus_to_exitcode(status)
        self.pid = None
        if code == 0 and not self.killed: return 'passed'
        self.failures += 1
        self.last = 'timed out after %d ms' % self.s['timeoutMs'] if self.killed else 'exited with code %d' % code
        self.next_at = self.started + self.s['periodMs'] / 1000.0
      elif not self.killed and now - self.started >= self.s['timeoutMs'] / 1000.0:
        self.killed = True
        try: os.killpg(self.pid, signal.SIGKILL)
        except OSError: pass
    if self.failures >= self.s['failureThreshold']: return 'failed'
    if self.pid is None and now >= self.next_at:
      self.killed = False
      self.started = now
      self.pid = self.spawn(self.s['argv'])
    return None

  def message(self):
    return 'startup probe %s failed %d times (failureThreshold %d); last: %s' % (
      self.s['argv'], self.failures, self.s['failureThreshold'], self.last)

  def reap(self):
    if self.pid is None: return
    try: os.killpg(self.pid, signal.SIGKILL)
    except OSError: pass
    try: os.waitpid(self.pid, 0)
    except ChildProcessError: pass
    self.pid = None
