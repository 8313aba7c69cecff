import os, types, unittest

from support import SUPERVISOR_DIR
import supervisor


def state(**over):
  s = {'running': True, 'init_pid': 7, 'exit_code': None, 'init_seen_at': 0.0, 'kill_at': None,
       'held_until': None, 'stop_reason': None, 'paused_at': None, 'deadline': 1e12, 'execs': {}}
  s.update(over)
  return types.SimpleNamespace(**s)


def timeout(now=100.0, **over):
  return supervisor.Supervisor.idle_timeout(state(**over), now, 0.0)


class IdleTimeout(unittest.TestCase):
  def test_the_supervisor_under_test_is_the_checkout_s(self):
    self.assertEqual(os.path.dirname(supervisor.__file__), os.path.normpath(SUPERVISOR_DIR))

  def test_a_running_idle_sandbox_blocks_until_an_event_or_its_deadline(self):
    self.assertEqual(timeout(deadline=100.5), 501)
    self.assertEqual(timeout(), supervisor.IDLE_MAX_MS)
    self.assertEqual(timeout(paused_at=90.0), -1)
    self.assertEqual(timeout(stop_reason='STOPPED_BY_USER'), -1)

  def test_a_due_timer_bounds_the_wait(self):
    self.assertEqual(timeout(kill_at=100.25), 251)
    self.assertEqual(timeout(held_until=102.0, paused_at=90.0), 2001)
    self.assertEqual(timeout(deadline=100.5, kill_at=100.25), 251)
    self.assertEqual(timeout(execs={'a': {'t': 95.0}, 'b': {'t': 99.0}}), 5001)
    self.assertEqual(timeout(kill_at=99.0), 0)

  def test_waiting_for_the_main_process_polls_tightly_then_backs_off(self):
    self.assertEqual(timeout(running=False, init_seen_at=99.99), 1)
    self.assertEqual(timeout(running=False, init_seen_at=99.8), 5)
    self.assertEqual(timeout(running=False, init_seen_at=90.0), 20)
    self.assertEqual(timeout(running=False, exit_code=0, paused_at=90.0), -1)
