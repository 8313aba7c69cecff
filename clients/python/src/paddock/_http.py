"""HTTP to the gateway: keep-alive connections, auth, JSON, error mapping and retries."""

from __future__ import annotations

import http.client
import json
import random
import socket
import threading
import time
from contextlib import contextmanager
from typing import Any, Dict, Iterable, Iterator, List, Mapping, Optional, Sequence, Tuple, Union
from urllib.parse import quote, urlencode, urlsplit

from . import __about__
from ._defaults import API_KEY_ENV, ClientConfig
from ._websocket import HandshakeRefused, WebSocket
from .exceptions import (
    CWSandboxAuthenticationError,
    CWSandboxError,
    SandboxRequestTimeoutError,
    SandboxUnavailableError,
    error_from_http,
)

QueryValue = Union[str, int, float, bool, Sequence[str], None]
Query = Mapping[str, QueryValue]
Body = Union[bytes, Iterable[bytes], None]

_MAX_IDLE = 8
#: TCP keepalive on every connection: a peer that vanished without a word (a dead host, a cut
#: cable) is noticed in about a minute even on a stream that is legitimately idle (logs, follow).
_TCP_KEEPALIVE = (("TCP_KEEPIDLE", 30), ("TCP_KEEPINTVL", 10), ("TCP_KEEPCNT", 3))


def sandbox_path(sandbox_id: str, suffix: str = "") -> str:
    return f"/v1/sandboxes/{quote(sandbox_id, safe='')}{suffix}"


def backoff_delay(attempt: int, initial: float, maximum: float) -> float:
    """Delay before retry ``attempt`` (0-based): exponential, with jitter in [d/2, d]."""
    d = min(maximum, initial * 2.0**attempt)
    return d / 2 + random.random() * d / 2


def _encode_query(query: Optional[Query]) -> str:
    pairs: List[Tuple[str, str]] = []
    for key, value in (query or {}).items():
        if value is None:
            continue
        if isinstance(value, bool):
            pairs.append((key, "true" if value else "false"))
        elif isinstance(value, (list, tuple)):
            pairs.extend((key, str(v)) for v in value)
        else:
            pairs.append((key, str(value)))
    return urlencode(pairs)


def _enable_tcp_keepalive(sock: socket.socket) -> None:
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
    for name, value in _TCP_KEEPALIVE:
        if hasattr(socket, name):
            sock.setsockopt(socket.IPPROTO_TCP, getattr(socket, name), value)


class _Connection(http.client.HTTPConnection):
    def connect(self) -> None:
        super().connect()
        _enable_tcp_keepalive(self.sock)


class _SecureConnection(http.client.HTTPSConnection):
    def connect(self) -> None:
        super().connect()
        _enable_tcp_keepalive(self.sock)


class _NetworkError(Exception):
    """A connection-level failure (refused, reset, timed out), before any answer was read."""

    def __init__(self, cause: BaseException, reused: bool) -> None:
        super().__init__(str(cause))
        self.cause = cause
        #: It happened on a kept-alive connection the server may have closed meanwhile.
        self.reused = reused


class Answer:
    """A successful response whose body is still to be read, and a way to abandon it from any
    thread (a reader blocked on it wakes up with an error)."""

    def __init__(self, conn: http.client.HTTPConnection, response: http.client.HTTPResponse) -> None:
        self._conn = conn
        self.response = response

    def abort(self) -> None:
        sock = self._conn.sock
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


class Transport:
    """Everything that talks HTTP (and WebSocket) to one gateway, with one pool of connections."""

    def __init__(self, config: ClientConfig) -> None:
        self.config = config
        parts = urlsplit(config.base_url)
        self._secure = parts.scheme == "https"
        self._host = parts.hostname or "127.0.0.1"
        self._port = parts.port or (443 if self._secure else 80)
        self._prefix = parts.path.rstrip("/")
        self._idle: List[http.client.HTTPConnection] = []
        self._lock = threading.Lock()

    # -- connections ------------------------------------------------------------------------

    def _new_connection(self, timeout: float) -> http.client.HTTPConnection:
        if self._secure:
            return _SecureConnection(self._host, self._port, timeout=timeout)
        return _Connection(self._host, self._port, timeout=timeout)

    def _take(self, timeout: float) -> Tuple[http.client.HTTPConnection, bool]:
        with self._lock:
            conn = self._idle.pop() if self._idle else None
        if conn is None:
            return self._new_connection(timeout), False
        conn.timeout = timeout
        if conn.sock is not None:
            conn.sock.settimeout(timeout)
        return conn, True

    def _give_back(self, conn: http.client.HTTPConnection) -> None:
        with self._lock:
            if len(self._idle) < _MAX_IDLE:
                self._idle.append(conn)
                return
        conn.close()

    def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()

    def headers(self, extra: Optional[Mapping[str, str]] = None) -> Dict[str, str]:
        h = {"User-Agent": f"paddock-python/{__about__.__version__}"}
        if self.config.api_key:
            h["Authorization"] = f"Bearer {self.config.api_key}"
        h.update(extra or {})
        return h

    def url(self, path: str, query: Optional[Query] = None) -> str:
        q = _encode_query(query)
        return f"{self._prefix}{path}{'?' + q if q else ''}"

    # -- one exchange -----------------------------------------------------------------------

    def _send(
        self, method: str, path: str, query: Optional[Query], body: Body, headers: Mapping[str, str], timeout: float
    ) -> Tuple[http.client.HTTPConnection, http.client.HTTPResponse]:
        conn, reused = self._take(timeout)
        try:
            if body is None or isinstance(body, (bytes, bytearray)):
                conn.request(method, self.url(path, query), body=body, headers=dict(headers))
            else:
                conn.request(method, self.url(path, query), body=body, headers=dict(headers), encode_chunked=True)
            return conn, conn.getresponse()
        except (OSError, http.client.HTTPException) as e:
            conn.close()
            raise _NetworkError(e, reused) from e

    def _fail(self, status: int, data: bytes) -> CWSandboxError:
        err = error_from_http(status, data)
        if isinstance(err, CWSandboxAuthenticationError) and not self.config.api_key and err.code == "unauthenticated":
            err.message += f" (no API key: set {API_KEY_ENV} or pass api_key=)"
        return err

    def _network_error(self, e: _NetworkError) -> CWSandboxError:
        cause = e.cause
        where = f"{self.config.base_url}"
        if isinstance(cause, socket.timeout):
            return SandboxRequestTimeoutError(f"the gateway at {where} did not answer in time", code="deadline_exceeded")
        return SandboxUnavailableError(f"the gateway at {where} is unreachable: {cause}", code="unavailable")

    @contextmanager
    def exchange(
        self,
        method: str,
        path: str,
        *,
        query: Optional[Query] = None,
        body: Body = None,
        headers: Optional[Mapping[str, str]] = None,
        timeout: Optional[float] = None,
        retry: bool = True,
    ) -> Iterator[Answer]:
        """A successful response, its body not read yet (for streams). Failures are retried when
        ``retry`` (only retryable codes and connection failures; the request must be idempotent
        and its body replayable), then raised as the most specific error."""
        t = timeout if timeout is not None else self.config.request_timeout_seconds
        h = self.headers(headers)
        last: Optional[CWSandboxError] = None
        stale_retries = 0
        attempt = 0
        while True:
            try:
                conn, resp = self._send(method, path, query, body, h, t)
            except _NetworkError as e:
                # A kept-alive connection the server closed meanwhile: resend once on a fresh one
                # (only a body that can be sent again: a chunk iterator may be half consumed).
                replayable = body is None or isinstance(body, (bytes, bytearray))
                if e.reused and stale_retries < 1 and replayable:
                    stale_retries += 1
                    continue
                last = self._network_error(e)
            else:
                if 200 <= resp.status < 300:
                    completed = False
                    try:
                        yield Answer(conn, resp)
                        completed = True
                    finally:
                        if completed and not resp.will_close and resp.isclosed():
                            self._give_back(conn)
                        else:
                            conn.close()
                    return
                try:
                    data = resp.read()
                except (OSError, http.client.HTTPException):
                    data = b""
                if resp.will_close:
                    conn.close()
                else:
                    self._give_back(conn)
                last = self._fail(resp.status, data)
            if not (retry and last.retryable and attempt < self.config.max_retries):
                raise last
            time.sleep(last.retry_delay if last.retry_delay is not None else backoff_delay(attempt, self.config.initial_backoff_seconds, self.config.max_backoff_seconds))
            attempt += 1

    def request(
        self,
        method: str,
        path: str,
        *,
        query: Optional[Query] = None,
        json_body: Any = None,
        raw: Optional[bytes] = None,
        timeout: Optional[float] = None,
        retry: bool = True,
    ) -> bytes:
        """The whole body of a successful response."""
        headers: Dict[str, str] = {}
        body: Optional[bytes] = None
        if raw is not None:
            headers["Content-Type"] = "application/octet-stream"
            body = raw
        elif json_body is not None:
            headers["Content-Type"] = "application/json"
            body = json.dumps(json_body).encode("utf-8")
        with self.exchange(method, path, query=query, body=body, headers=headers, timeout=timeout, retry=retry) as answer:
            try:
                return answer.response.read()
            except (OSError, http.client.HTTPException) as e:
                raise SandboxUnavailableError(f"the connection to the gateway broke while reading the answer: {e}", code="unavailable") from e

    def json(self, method: str, path: str, **kwargs: Any) -> Any:
        data = self.request(method, path, **kwargs)
        return json.loads(data.decode("utf-8")) if data else {}

    # -- WebSocket --------------------------------------------------------------------------

    def websocket(self, path: str) -> WebSocket:
        """Opens the WebSocket at ``path``; an HTTP refusal becomes the mapped error."""
        scheme = "wss" if self._secure else "ws"
        default_port = self._port == (443 if self._secure else 80)
        authority = self._host if default_port else f"{self._host}:{self._port}"
        try:
            return WebSocket.connect(
                f"{scheme}://{authority}{self.url(path)}",
                self.headers(),
                timeout=min(self.config.request_timeout_seconds, 30.0),
                keepalive=self.config.stream_keepalive_seconds,
            )
        except HandshakeRefused as e:
            raise self._fail(e.status, e.body) from None
        except OSError as e:
            raise self._network_error(_NetworkError(e, False)) from e
