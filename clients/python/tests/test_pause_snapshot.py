"""Pause and resume, and file-system snapshots, against the real gateway and runner."""

from __future__ import annotations

import paddock
from paddock import SandboxStatus

from ._support import RUNNER_ID, SandboxTestCase, wait_until


class PauseAndResume(SandboxTestCase):
    def test_pause_freezes_and_any_call_resumes(self) -> None:
        sb = self.run_sandbox("sleep", "600", runner_ids=[RUNNER_ID])
        sb.wait(timeout=120)
        sb.write_file("/workspace/before", b"kept").result(timeout=30)
        sb.pause().result(timeout=30)
        self.assertEqual(sb.status, SandboxStatus.PAUSED)
        self.assertEqual(sb.get_status(), SandboxStatus.PAUSED)
        # Reading a file resumes it first; the file is there.
        self.assertEqual(sb.read_file("/workspace/before").result(timeout=30), b"kept")
        wait_until(lambda: sb.get_status() == SandboxStatus.RUNNING, timeout=15, what="the sandbox resumed by the read")
        sb.pause().result(timeout=30)
        sb.resume().result(timeout=30)
        self.assertEqual(sb.status, SandboxStatus.RUNNING)


class Snapshots(SandboxTestCase):
    def test_snapshot_restore_and_stop_with_snapshot(self) -> None:
        sb = self.run_sandbox("sleep", "600", runner_ids=[RUNNER_ID])
        sb.wait(timeout=120)
        sb.write_file("/workspace/data.bin", bytes(range(256)) * 4096).result(timeout=30)
        snap = sb.snapshot().result(timeout=120)
        self.assertEqual(snap["state"], "SNAPSHOT_STATE_READY")
        self.assertEqual(snap["sourceSandboxId"], sb.sandbox_id)
        self.assertGreater(snap["sizeBytes"], 1024 * 1024)

        sb.write_file("/workspace/later.txt", b"written after the first snapshot").result(timeout=30)
        ids = sb.stop_with_snapshot().result(timeout=120)
        self.assertEqual(len(ids), 1)
        self.assertEqual(sb.file_system_snapshot_id, ids[0])
        self.assertTrue(sb.get_status().is_terminal)

        restored = self.run_sandbox("sleep", "600", runner_ids=[RUNNER_ID], file_system_snapshot=ids[0])
        restored.wait(timeout=120)
        self.assertEqual(restored.read_file("/workspace/data.bin").result(timeout=30), bytes(range(256)) * 4096)
        self.assertEqual(restored.read_file("/workspace/later.txt").result(timeout=30), b"written after the first snapshot")

        first = self.run_sandbox("sleep", "600", runner_ids=[RUNNER_ID], file_system_snapshot={"file_system_snapshot_id": snap["fileSystemSnapshotId"]})
        first.wait(timeout=120)
        # The first snapshot was taken before that file existed.
        with self.assertRaises(paddock.CWSandboxError):
            first.read_file("/workspace/later.txt").result(timeout=30)
