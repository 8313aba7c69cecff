"""The main process's log: all of it, the tail, since a time, with timestamps, and followed."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import List

from ._support import SandboxTestCase, next_within, wait_until

SCRIPT = 'for i in 1 2 3 4 5; do echo "line $i"; done; echo "to stderr" >&2; sleep 600'
ALL = ["line 1\n", "line 2\n", "line 3\n", "line 4\n", "line 5\n", "to stderr\n"]


class Logs(SandboxTestCase):
    def test_reading_the_log(self) -> None:
        before = datetime.now(timezone.utc) - timedelta(minutes=5)
        sb = self.run_sandbox("sh", "-c", SCRIPT)

        def lines(**kwargs: object) -> List[str]:
            return list(sb.stream_logs(**kwargs))  # type: ignore[arg-type]

        wait_until(lambda: lines() == ALL, 60, "the whole log")
        self.assertEqual(lines(tail_lines=2), ALL[-2:])
        self.assertEqual(lines(since_time=before), ALL)
        self.assertEqual(lines(since_time=datetime.now(timezone.utc) + timedelta(minutes=5)), [])
        stamped = lines(timestamps=True)
        self.assertEqual(len(stamped), len(ALL))
        for line, plain in zip(stamped, ALL):
            stamp, _, text = line.partition(" ")
            self.assertEqual(text, plain)
            self.assertGreaterEqual(datetime.fromisoformat(stamp.replace("Z", "+00:00")), before)
        with self.assertRaisesRegex(ValueError, "timezone"):
            sb.stream_logs(since_time=datetime.now())
        with self.assertRaises(ValueError):
            sb.stream_logs(tail_lines=-1)

    def test_follow_delivers_lines_as_they_come_and_ends_with_the_sandbox(self) -> None:
        sb = self.run_sandbox("sh", "-c", "echo start; while [ ! -f /tmp/go ]; do sleep 0.1; done; echo done")
        follow = sb.stream_logs(follow=True)
        self.assertEqual(next_within(follow, 60), "start\n")
        sb.write_file("/tmp/go", b"").result(timeout=60)
        self.assertEqual(next_within(follow, 60), "done\n")
        with self.assertRaises(StopIteration):
            next_within(follow, 60)  # the sandbox ended, so did the stream
        self.assertEqual(sb.wait_until_complete(timeout=60).result(timeout=90), 0)

    def test_closing_a_follow_stream(self) -> None:
        sb = self.run_sandbox("sh", "-c", "echo only; sleep 600")
        follow = sb.stream_logs(follow=True)
        self.assertEqual(next_within(follow, 60), "only\n")
        follow.close()
        with self.assertRaises(StopIteration):
            next_within(follow, 10)
