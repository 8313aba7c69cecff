"""Commands: results, live output, stdin, check, timeouts, cancel, awaiting, and the TTY shell."""

from __future__ import annotations

import asyncio
import os
from typing import List, Optional

import paddock
from paddock import Sandbox

from ._support import RUN_TAG, SandboxTestCase, next_within, read_until, require_platform


class Exec(SandboxTestCase):
    sb: Sandbox

    @classmethod
    def setUpClass(cls) -> None:
        require_platform()
        cls.sb = Sandbox.run(tags=[RUN_TAG]).wait(timeout=120)

    @classmethod
    def tearDownClass(cls) -> None:
        cls.sb.stop(graceful_shutdown_seconds=0, missing_ok=True).result(timeout=60)

    def test_result(self) -> None:
        r = self.sb.exec(["sh", "-c", "echo out; echo err >&2; exit 3"]).result(timeout=60)
        self.assertEqual((r.stdout, r.stderr, r.returncode), ("out\n", "err\n", 3))
        self.assertEqual((r.stdout_bytes, r.stderr_bytes), (b"out\n", b"err\n"))
        self.assertEqual(r.command, ("sh", "-c", "echo out; echo err >&2; exit 3"))
        self.assertIsNone(r.signal)

    def test_binary_output_is_kept_exactly(self) -> None:
        r = self.sb.exec(["sh", "-c", r"printf '\000\001\377\n'"]).result(timeout=60)
        self.assertEqual(r.stdout_bytes, b"\x00\x01\xff\n")

    def test_lines_arrive_while_the_command_runs(self) -> None:
        p = self.sb.exec(["sh", "-c", "echo first; echo warn >&2; read answer; echo second $answer"], stdin=True)
        self.assertEqual(next_within(p.stdout, 60), "first\n")
        self.assertEqual(next_within(p.stderr, 60), "warn\n")
        # The command is still waiting for its stdin: the line came out before it ended.
        self.assertIsNone(p.poll())
        self.assertIsNone(p.returncode)
        assert p.stdin is not None
        p.stdin.writeline("go").result(timeout=30)
        self.assertEqual(list(p.stdout), ["second go\n"])
        self.assertEqual(list(p.stderr), [])
        self.assertEqual(p.result(timeout=60).stdout, "first\nsecond go\n")
        self.assertEqual(p.poll(), 0)

    def test_a_partial_last_line_still_comes_out(self) -> None:
        p = self.sb.exec(["printf", "a\nb"])
        self.assertEqual(list(p.stdout), ["a\n", "b"])

    def test_stdin_writer(self) -> None:
        data = os.urandom(300 * 1024)
        p = self.sb.exec(["cat"], stdin=True)
        assert p.stdin is not None
        self.assertFalse(p.stdin.closed)
        p.stdin.write(data[:1000]).result(timeout=30)
        p.stdin.write(data[1000:]).result(timeout=30)
        p.stdin.close().result(timeout=30)
        p.stdin.close().result(timeout=1)  # idempotent
        self.assertTrue(p.stdin.closed)
        with self.assertRaises(paddock.SandboxExecutionError):
            p.stdin.write(b"too late").result(timeout=5)
        self.assertEqual(p.result(timeout=60).stdout_bytes, data)
        with self.assertRaises(TypeError):
            p.stdin.write("text")  # type: ignore[arg-type]

    def test_without_stdin_the_command_sees_eof(self) -> None:
        p = self.sb.exec(["cat"])
        self.assertIsNone(p.stdin)
        self.assertEqual(p.result(timeout=60).stdout, "")

    def test_check_raises_on_a_non_zero_exit(self) -> None:
        p = self.sb.exec(["sh", "-c", "echo broken >&2; exit 4"], check=True)
        with self.assertRaises(paddock.SandboxExecutionError) as cm:
            p.result(timeout=60)
        assert cm.exception.exec_result is not None
        self.assertEqual(cm.exception.exec_result.returncode, 4)
        self.assertEqual(cm.exception.exec_result.stderr, "broken\n")
        self.assertIn("exited with code 4", str(cm.exception))
        # The exit code itself stays readable.
        self.assertEqual(p.wait(timeout=5), 4)
        self.assertEqual(p.poll(), 4)
        self.assertEqual(self.sb.exec(["true"], check=True).result(timeout=60).returncode, 0)

    def test_timeout_kills_the_command(self) -> None:
        p = self.sb.exec(["sleep", "60"], timeout_seconds=1)
        with self.assertRaises(paddock.SandboxCommandTimeoutError) as cm:
            p.result(timeout=30)
        self.assertIsInstance(cm.exception, paddock.SandboxTimeoutError)
        self.assertEqual(cm.exception.reason, "CWSANDBOX_COMMAND_TIMEOUT")

    def test_cancel(self) -> None:
        p = self.sb.exec(["sh", "-c", "echo started; sleep 60"])
        self.assertEqual(next_within(p.stdout, 60), "started\n")
        p.cancel()
        r = p.result(timeout=30)
        self.assertEqual((r.returncode, r.signal), (137, "SIGKILL"))
        # Cancelled before it even started: the kill waits for the start and still lands.
        early = self.sb.exec(["sleep", "60"])
        early.cancel()
        self.assertEqual(early.result(timeout=30).signal, "SIGKILL")

    def test_cwd_and_env(self) -> None:
        r = self.sb.exec(["sh", "-c", 'pwd; echo "$COLOR"'], cwd="/tmp", env={"COLOR": "green"}).result(timeout=60)
        self.assertEqual(r.stdout, "/tmp\ngreen\n")

    def test_bad_arguments(self) -> None:
        with self.assertRaisesRegex(ValueError, "Command cannot be empty"):
            self.sb.exec([])
        with self.assertRaisesRegex(ValueError, "absolute"):
            self.sb.exec(["ls"], cwd="relative/dir")
        with self.assertRaises(TypeError):
            self.sb.exec("ls -la")  # type: ignore[arg-type]

    def test_a_missing_program_exits_127(self) -> None:
        r = self.sb.exec(["/no/such/program"]).result(timeout=60)
        self.assertEqual(r.returncode, 127)
        self.assertIn("/no/such/program", r.stderr)

    def test_parallel_commands(self) -> None:
        procs = [self.sb.exec(["sh", "-c", f"sleep 0.5; echo {i}"]) for i in range(4)]
        self.assertEqual([r.stdout for r in paddock.results(procs)], ["0\n", "1\n", "2\n", "3\n"])
        done, pending = paddock.wait(procs, timeout=30)
        self.assertEqual((len(done), pending), (4, []))

    def test_await_and_async_iteration(self) -> None:
        async def main() -> List[str]:
            p = self.sb.exec(["sh", "-c", "echo one; echo two"])
            lines = [line async for line in p.stdout]
            result = await p
            self.assertEqual(result.returncode, 0)
            return lines

        self.assertEqual(asyncio.run(main()), ["one\n", "two\n"])

    def test_exec_on_an_ended_sandbox_is_refused(self) -> None:
        sb = self.run_sandbox("true")
        sb.wait_until_complete(timeout=120).result(timeout=150)
        with self.assertRaises(paddock.SandboxTerminatedError):
            sb.exec(["echo", "late"]).result(timeout=60)


class Shell(SandboxTestCase):
    def test_tty_and_resize(self) -> None:
        sb = self.run_sandbox()
        t = sb.shell(width=100, height=30)
        # The terminal echoes input back: the answers are computed so the echo cannot match them.
        t.stdin.writeline("stty size; test -t 0 && echo on-a-tty-$((6 * 7))").result(timeout=60)
        self.assertIn(b"30 100", read_until(t.output, b"on-a-tty-42", 60))
        t.resize(120, 40)
        t.stdin.writeline("stty size").result(timeout=30)
        self.assertIn(b"40 120", read_until(t.output, b"40 120", 30))
        t.stdin.writeline("exit 5").result(timeout=30)
        result = t.result(timeout=60)
        self.assertEqual(result.returncode, 5)
        self.assertIn(b"on-a-tty-42", result.output)
        self.assertEqual(result.command, ("/bin/sh",))

    def test_a_given_command(self) -> None:
        sb = self.run_sandbox()
        t = sb.shell(["sh", "-c", "stty size"], width=81, height=25)
        out: Optional[bytes] = t.result(timeout=60).output
        self.assertEqual(out, b"25 81\r\n")
        with self.assertRaises(ValueError):
            sb.shell(width=0)
