"""Files in a sandbox: byte-exact both ways, small and large, and the streaming variants."""

from __future__ import annotations

import hashlib
import os
from typing import Iterator

import paddock
from paddock import Sandbox

from ._support import RUN_TAG, SandboxTestCase, gateway_requests, require_platform

MiB = 1024 * 1024


class Files(SandboxTestCase):
    sb: Sandbox

    @classmethod
    def setUpClass(cls) -> None:
        require_platform()
        cls.sb = Sandbox.run(tags=[RUN_TAG], resources={"cpu": "500m", "memory": "512Mi"}).wait(timeout=120)

    @classmethod
    def tearDownClass(cls) -> None:
        cls.sb.stop(graceful_shutdown_seconds=0, missing_ok=True).result(timeout=60)

    def sandbox_sha256(self, path: str) -> str:
        return self.sb.exec(["sha256sum", path], check=True).result(timeout=60).stdout.split()[0]

    def test_binary_round_trip(self) -> None:
        data = bytes(range(256)) * 64 + os.urandom(256 * 1024)
        self.sb.write_file("/tmp/every-byte.bin", data).result(timeout=60)
        self.assertEqual(self.sb.read_file("/tmp/every-byte.bin").result(timeout=60), data)
        # The sandbox sees exactly those bytes too.
        self.assertEqual(self.sandbox_sha256("/tmp/every-byte.bin"), hashlib.sha256(data).hexdigest())

    def test_files_too_big_for_one_nats_message_but_sent_inline(self) -> None:
        # Up to 4 MiB the client sends base64 JSON; past 512 KiB the gateway must stream it on.
        for size in (1_000_000, 3 * MiB):
            data = os.urandom(size)
            self.sb.write_file("/tmp/medium.bin", data).result(timeout=120)
            self.assertEqual(self.sandbox_sha256("/tmp/medium.bin"), hashlib.sha256(data).hexdigest(), size)
            self.assertEqual(self.sb.read_file("/tmp/medium.bin").result(timeout=120), data, size)

    def test_a_large_file_goes_as_raw_bytes(self) -> None:
        data = os.urandom(6 * MiB)
        puts = gateway_requests("PUT", "/v1/sandboxes/:id/files")
        self.sb.write_file("/tmp/large.bin", data).result(timeout=120)
        self.assertEqual(gateway_requests("PUT", "/v1/sandboxes/:id/files") - puts, 1)
        self.assertEqual(self.sb.read_file("/tmp/large.bin").result(timeout=120), data)

    def test_empty_file(self) -> None:
        self.sb.write_file("/tmp/empty", b"").result(timeout=60)
        self.assertEqual(self.sb.read_file("/tmp/empty").result(timeout=60), b"")
        self.assertEqual(self.sb.exec(["stat", "-c", "%s", "/tmp/empty"]).result(timeout=60).stdout, "0\n")

    def test_a_file_written_inside_is_read_outside(self) -> None:
        self.sb.exec(["sh", "-c", r"printf 'made\000inside' > /tmp/inside"], check=True).result(timeout=60)
        self.assertEqual(self.sb.read_file("/tmp/inside").result(timeout=60), b"made\x00inside")

    def test_errors(self) -> None:
        with self.assertRaises(paddock.SandboxFileError) as cm:
            self.sb.read_file("/tmp/does-not-exist").result(timeout=60)
        self.assertEqual(cm.exception.reason, "CWSANDBOX_FILE_NOT_FOUND")
        with self.assertRaises(paddock.SandboxValidationError) as bad:
            self.sb.write_file("relative/path", b"x").result(timeout=60)
        self.assertIn("absolute", str(bad.exception))
        with self.assertRaises(TypeError):
            self.sb.write_file("/tmp/text", "not bytes")  # type: ignore[arg-type]

    def test_streaming_write_and_read(self) -> None:
        parts = [os.urandom(100 * 1024) for _ in range(40)]

        def chunks() -> Iterator[bytes]:
            yield from parts

        self.sb.write_file_streaming("/tmp/streamed.bin", chunks()).result(timeout=120)
        expected = b"".join(parts)
        self.assertEqual(self.sandbox_sha256("/tmp/streamed.bin"), hashlib.sha256(expected).hexdigest())
        received = list(self.sb.read_file_streaming("/tmp/streamed.bin"))
        self.assertGreater(len(received), 1)  # it came in pieces
        self.assertEqual(b"".join(received), expected)

        self.sb.write_file_streaming("/tmp/streamed-bytes.bin", b"plain bytes").result(timeout=60)
        self.assertEqual(self.sb.read_file("/tmp/streamed-bytes.bin").result(timeout=60), b"plain bytes")
        self.sb.write_file_streaming("/tmp/streamed-empty", iter([])).result(timeout=60)
        self.assertEqual(self.sb.read_file("/tmp/streamed-empty").result(timeout=60), b"")

    def test_streaming_read_of_a_missing_file_raises(self) -> None:
        with self.assertRaises(paddock.SandboxFileError):
            list(self.sb.read_file_streaming("/tmp/still-missing"))

    def test_parallel_reads(self) -> None:
        for i in range(3):
            self.sb.write_file(f"/tmp/p{i}", f"file {i}".encode()).result(timeout=60)
        self.assertEqual(paddock.results([self.sb.read_file(f"/tmp/p{i}") for i in range(3)]), [b"file 0", b"file 1", b"file 2"])
