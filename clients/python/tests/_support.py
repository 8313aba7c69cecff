"""What the tests share: the platform they run against, unique tags, a killable TCP proxy and
the gateway's own request counters.

The suite needs a running platform: ``PADDOCK_GATEWAY_URL`` and ``PADDOCK_API_KEY`` (a user key),
and ``PADDOCK_TEST_RUNNER_ID`` (the runner sandboxes land on). ``pnpm test`` starts one (see
``test/python-client.spec.ts``); by hand, ``test/support/serve.ts`` does.
"""

from __future__ import annotations

import os
import re
import select
import socket
import struct
import threading
import time
import unittest
import urllib.request
import uuid
from typing import Any, Callable, Dict, List, Optional, Tuple
from urllib.parse import urlsplit

import paddock

_REQUIRED = ("PADDOCK_GATEWAY_URL", "PADDOCK_API_KEY", "PADDOCK_TEST_RUNNER_ID")
GATEWAY_URL = os.environ.get("PADDOCK_GATEWAY_URL", "").rstrip("/")
API_KEY = os.environ.get("PADDOCK_API_KEY", "")
RUNNER_ID = os.environ.get("PADDOCK_TEST_RUNNER_ID", "")


def require_platform() -> None:
    """Fails (never skips) a test that has no platform to run against."""
    missing = [k for k in _REQUIRED if not os.environ.get(k)]
    if missing:
        raise RuntimeError(f"the Python client tests need a running platform: set {', '.join(missing)} (see tests/_support.py)")
#: Every sandbox of this test process carries it, so the suite finds (and cleans up) its own.
RUN_TAG = f"pytest-{uuid.uuid4().hex[:12]}"


def unique_tag(prefix: str = "t") -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


def wait_until(probe: Callable[[], Any], timeout: float = 30.0, what: str = "condition") -> Any:
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        last = probe()
        if last:
            return last
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout} s waiting for {what} (last: {last!r})")


class SandboxTestCase(unittest.TestCase):
    """Stops, after each test, every sandbox the test started through ``self.run_sandbox``."""

    @classmethod
    def setUpClass(cls) -> None:
        require_platform()

    def setUp(self) -> None:
        self._sandboxes: List[paddock.Sandbox] = []

    def tearDown(self) -> None:
        for sb in self._sandboxes:
            try:
                sb.stop(graceful_shutdown_seconds=0, missing_ok=True).result(timeout=60)
            except paddock.CWSandboxError:
                pass

    def run_sandbox(self, *args: str, **options: Any) -> paddock.Sandbox:
        options["tags"] = [RUN_TAG, *options.get("tags", [])]
        sb = paddock.Sandbox.run(*args, **options)
        self._sandboxes.append(sb)
        return sb


def gateway_requests(method: str, route: str) -> int:
    """How many ``method route`` requests the gateway has answered (its Prometheus counter)."""
    with urllib.request.urlopen(f"{GATEWAY_URL}/metrics", timeout=10) as resp:
        text = resp.read().decode("utf-8")
    total = 0
    pattern = re.compile(r'^paddock_gateway_http_request_duration_seconds_count\{(.*)\} (\d+(?:\.\d+)?)$')
    for line in text.splitlines():
        m = pattern.match(line)
        if not m:
            continue
        labels = dict(re.findall(r'(\w+)="([^"]*)"', m.group(1)))
        if labels.get("method") == method and labels.get("route") == route:
            total += int(float(m.group(2)))
    return total


class TcpProxy:
    """A TCP proxy in front of the gateway that a test can break: ``kill()`` resets every
    connection and stops accepting (the gateway, as far as the client can tell, died);
    ``freeze()`` keeps the connections open but forwards nothing more (a silent network)."""

    def __init__(self, target_url: str = GATEWAY_URL) -> None:
        parts = urlsplit(target_url)
        self._target: Tuple[str, int] = (parts.hostname or "127.0.0.1", parts.port or 80)
        self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(16)
        self.url = f"http://127.0.0.1:{self._listener.getsockname()[1]}"
        self._sockets: List[socket.socket] = []
        self._lock = threading.Lock()
        self._frozen = threading.Event()
        self._dead = threading.Event()
        self.connections = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self._dead.is_set():
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(self._target, timeout=10)
            except OSError:
                client.close()
                continue
            with self._lock:
                self._sockets += [client, upstream]
                self.connections += 1
            threading.Thread(target=self._pump, args=(client, upstream), daemon=True).start()

    def _pump(self, a: socket.socket, b: socket.socket) -> None:
        peers: Dict[socket.socket, socket.socket] = {a: b, b: a}
        try:
            while not self._dead.is_set():
                ready, _, _ = select.select(list(peers), [], [], 0.1)
                if self._frozen.is_set():
                    continue
                for s in ready:
                    data = s.recv(65536)
                    if not data:
                        return
                    peers[s].sendall(data)
        except OSError:
            return
        finally:
            if not self._frozen.is_set():
                for s in (a, b):
                    try:
                        s.close()
                    except OSError:
                        pass

    def freeze(self) -> None:
        self._frozen.set()

    def drop(self) -> None:
        """Resets the connections open now, but keeps accepting new ones (a network blip)."""
        self._reset_all()

    def kill(self) -> None:
        self._dead.set()
        self._listener.close()
        self._reset_all()

    def _reset_all(self) -> None:
        with self._lock:
            sockets, self._sockets = self._sockets, []
        for s in sockets:
            try:
                # RST rather than FIN: the connection is torn, not closed politely.
                s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                s.close()
            except OSError:
                pass

    def close(self) -> None:
        self.kill()


def sandbox_through(proxy: TcpProxy, sandbox: paddock.Sandbox, defaults: Optional[paddock.SandboxDefaults] = None) -> paddock.Sandbox:
    """A second handle on ``sandbox`` whose traffic goes through ``proxy``."""
    return paddock.Sandbox.from_id(str(sandbox.sandbox_id), base_url=proxy.url, defaults=defaults).result(timeout=30)


def next_within(reader: paddock.StreamReader[Any], timeout: float) -> Any:
    """``next(reader)``, failing the test instead of hanging if nothing comes in ``timeout`` s;
    what the stream raised is raised here."""
    ref: paddock.OperationRef[Any] = paddock.OperationRef.start(lambda: next(reader))
    return ref.result(timeout=timeout)


def read_until(reader: paddock.StreamReader[bytes], needle: bytes, timeout: float = 30.0) -> bytes:
    """Raw output chunks until ``needle`` shows up (the chunks so far are returned)."""
    seen = b""
    deadline = time.monotonic() + timeout
    while needle not in seen:
        left = deadline - time.monotonic()
        if left <= 0:
            raise AssertionError(f"{needle!r} did not show up within {timeout} s; got {seen!r}")
        seen += next_within(reader, left)
    return seen


def elapsed(fn: Callable[[], Any]) -> Tuple[float, Optional[BaseException]]:
    """Seconds ``fn`` took, and what it raised (``None`` if nothing)."""
    t0 = time.monotonic()
    try:
        fn()
    except BaseException as e:  # noqa: BLE001 - the caller asserts on it
        return time.monotonic() - t0, e
    return time.monotonic() - t0, None
