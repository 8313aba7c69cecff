"""A connection to the gateway that dies (or goes silent) mid-stream: a clear error, never a hang.

Each test runs the traffic of one handle through a TCP proxy it then breaks; the sandbox itself
is reached directly by a second handle.
"""

from __future__ import annotations

import paddock
from paddock import SandboxDefaults

from ._support import SandboxTestCase, TcpProxy, elapsed, next_within, sandbox_through


class ConnectionLoss(SandboxTestCase):
    def setUp(self) -> None:
        super().setUp()
        self.proxy = TcpProxy()
        self.addCleanup(self.proxy.close)

    def test_a_killed_connection_mid_exec(self) -> None:
        direct = self.run_sandbox().wait(timeout=120)
        sb = sandbox_through(self.proxy, direct)
        p = sb.exec(["sh", "-c", "echo started; sleep 60"])
        self.assertEqual(next_within(p.stdout, 60), "started\n")
        self.proxy.kill()
        took, error = elapsed(lambda: p.result(timeout=30))
        self.assertIsInstance(error, paddock.SandboxUnavailableError, error)
        self.assertIn("lost before the command exited", str(error))
        self.assertLess(took, 30)
        # The readers end with the same error rather than waiting for lines that cannot come.
        with self.assertRaises(paddock.SandboxUnavailableError):
            next_within(p.stdout, 10)
        with self.assertRaises(paddock.SandboxUnavailableError):
            p.wait(timeout=10)
        self.assertIsNone(p.poll())

    def test_a_silent_connection_mid_exec(self) -> None:
        direct = self.run_sandbox().wait(timeout=120)
        sb = sandbox_through(self.proxy, direct, SandboxDefaults(stream_keepalive_seconds=1))
        p = sb.exec(["sh", "-c", "echo started; sleep 60"])
        self.assertEqual(next_within(p.stdout, 60), "started\n")
        self.proxy.freeze()  # no FIN, no RST: the bytes just stop
        took, error = elapsed(lambda: p.result(timeout=30))
        self.assertIsInstance(error, paddock.SandboxUnavailableError, error)
        self.assertIn("not even a pong", str(error))
        self.assertLess(took, 30)

    def test_a_quiet_command_on_a_healthy_connection_outlives_the_keepalive(self) -> None:
        # The gateway answers pings: silence from the command alone is not a lost connection.
        direct = self.run_sandbox().wait(timeout=120)
        sb = paddock.Sandbox.from_id(str(direct.sandbox_id), defaults=SandboxDefaults(stream_keepalive_seconds=0.3)).result(timeout=30)
        self.assertEqual(sb.exec(["sh", "-c", "sleep 2; echo still-here"]).result(timeout=60).stdout, "still-here\n")

    def test_a_killed_connection_mid_log_follow(self) -> None:
        direct = self.run_sandbox("sh", "-c", "echo one; sleep 600").wait(timeout=120)
        sb = sandbox_through(self.proxy, direct)
        follow = sb.stream_logs(follow=True)
        self.assertEqual(next_within(follow, 60), "one\n")
        self.proxy.kill()
        took, error = elapsed(lambda: next_within(follow, 60))
        self.assertIsInstance(error, paddock.SandboxUnavailableError, error)
        self.assertIn("after 3 resume attempts", str(error))
        self.assertLess(took, 60)

    def test_a_follow_stream_resumes_where_it_stopped(self) -> None:
        direct = self.run_sandbox("sh", "-c", "echo one; while [ ! -f /tmp/go ]; do sleep 0.1; done; echo two").wait(timeout=120)
        sb = sandbox_through(self.proxy, direct)
        follow = sb.stream_logs(follow=True)
        self.assertEqual(next_within(follow, 60), "one\n")
        connections = self.proxy.connections
        self.proxy.drop()  # the connection breaks; the proxy still accepts new ones
        direct.write_file("/tmp/go", b"").result(timeout=60)
        # Exactly the rest of the log: no gap, and "one" is not delivered twice.
        self.assertEqual(next_within(follow, 60), "two\n")
        with self.assertRaises(StopIteration):
            next_within(follow, 60)
        self.assertGreater(self.proxy.connections, connections)

    def test_an_unreachable_gateway(self) -> None:
        self.proxy.kill()
        took, error = elapsed(lambda: paddock.Sandbox.list(base_url=self.proxy.url, defaults=SandboxDefaults(max_retries=2)).result(timeout=60))
        self.assertIsInstance(error, paddock.SandboxUnavailableError, error)
        self.assertIn("unreachable", str(error))
        self.assertLess(took, 60)
