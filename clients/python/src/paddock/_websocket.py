"""A small RFC 6455 WebSocket client (client side only), on the standard library.

What the exec stream needs and no more: the opening handshake (with the accept-key check),
masked client frames, fragmented messages, ping/pong, the close handshake, and liveness: a
connection silent for ``keepalive`` seconds gets a ping, and one silent for twice that is
declared lost instead of blocking forever. Sending is thread-safe (a stdin thread and the reader
thread's pong share the socket); receiving is for one thread.
"""

from __future__ import annotations

import base64
import hashlib
import os
import select
import socket
import ssl
import struct
import threading
from dataclasses import dataclass
from typing import Dict, Optional, Tuple
from urllib.parse import urlsplit

_GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
OP_CONTINUATION, OP_TEXT, OP_BINARY, OP_CLOSE, OP_PING, OP_PONG = 0x0, 0x1, 0x2, 0x8, 0x9, 0xA
#: A message larger than this is refused (a broken or hostile peer cannot exhaust memory).
MAX_MESSAGE_BYTES = 64 * 1024 * 1024
_MAX_HANDSHAKE_BYTES = 64 * 1024


class ConnectionLost(Exception):
    """The connection ended (or went silent) without a close handshake."""


class HandshakeRefused(Exception):
    """The server answered the upgrade with an ordinary HTTP response (an error, usually)."""

    def __init__(self, status: int, body: bytes) -> None:
        super().__init__(f"HTTP {status}")
        self.status = status
        self.body = body


class ProtocolViolation(Exception):
    """The server broke RFC 6455."""


@dataclass(frozen=True)
class Message:
    opcode: int
    data: bytes

    @property
    def is_text(self) -> bool:
        return self.opcode == OP_TEXT


class Closed(Exception):
    """The server closed the connection with a close frame."""

    def __init__(self, code: Optional[int], reason: str) -> None:
        super().__init__(f"closed by the server ({code}{': ' + reason if reason else ''})")
        self.code = code
        self.reason = reason


def accept_key(key: str) -> str:
    """The ``Sec-WebSocket-Accept`` a server must answer to ``key`` (RFC 6455 section 4.2.2)."""
    return base64.b64encode(hashlib.sha1(key.encode("ascii") + _GUID).digest()).decode("ascii")


def mask(data: bytes, key: bytes) -> bytes:
    """XORs ``data`` with the 4-byte ``key`` repeated (one big-integer XOR instead of a byte loop)."""
    if not data:
        return b""
    n = len(data)
    repeated = (key * (n // 4 + 1))[:n]
    return (int.from_bytes(data, "big") ^ int.from_bytes(repeated, "big")).to_bytes(n, "big")


def encode_frame(opcode: int, payload: bytes, mask_key: Optional[bytes] = None, fin: bool = True) -> bytes:
    """One frame; client frames are always masked (``mask_key`` is drawn when not given)."""
    key = mask_key if mask_key is not None else os.urandom(4)
    head = bytearray([(0x80 if fin else 0) | opcode])
    n = len(payload)
    if n < 126:
        head.append(0x80 | n)
    elif n < 1 << 16:
        head.append(0x80 | 126)
        head += struct.pack("!H", n)
    else:
        head.append(0x80 | 127)
        head += struct.pack("!Q", n)
    return bytes(head) + key + mask(payload, key)


class WebSocket:
    """One client connection; build it with ``WebSocket.connect``."""

    def __init__(self, sock: socket.socket, leftover: bytes, keepalive: float) -> None:
        self._sock = sock
        self._buf = bytearray(leftover)
        self._keepalive = keepalive
        self._send_lock = threading.Lock()
        self._closing = False
        self._close_sent = False

    @classmethod
    def connect(cls, url: str, headers: Dict[str, str], *, timeout: float, keepalive: float) -> WebSocket:
        """Opens ``ws://`` or ``wss://`` ``url``; raises ``HandshakeRefused`` on an HTTP answer."""
        parts = urlsplit(url)
        secure = parts.scheme == "wss"
        host = parts.hostname or "localhost"
        port = parts.port or (443 if secure else 80)
        raw = socket.create_connection((host, port), timeout=timeout)
        sock: socket.socket = ssl.create_default_context().wrap_socket(raw, server_hostname=host) if secure else raw
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            key = base64.b64encode(os.urandom(16)).decode("ascii")
            target = parts.path or "/"
            if parts.query:
                target += "?" + parts.query
            default_port = port == (443 if secure else 80)
            lines = [
                f"GET {target} HTTP/1.1",
                f"Host: {host if default_port else f'{host}:{port}'}",
                "Upgrade: websocket",
                "Connection: Upgrade",
                f"Sec-WebSocket-Key: {key}",
                "Sec-WebSocket-Version: 13",
                *(f"{k}: {v}" for k, v in headers.items()),
            ]
            sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
            status, response_headers, rest = _read_handshake(sock)
            if status != 101:
                raise HandshakeRefused(status, _read_body(sock, response_headers, rest))
            if response_headers.get("upgrade", "").lower() != "websocket" or response_headers.get("sec-websocket-accept") != accept_key(key):
                raise ProtocolViolation("the server's upgrade answer does not accept our key")
            sock.settimeout(None)
            return cls(sock, rest, keepalive)
        except BaseException:
            sock.close()
            raise

    # -- sending ----------------------------------------------------------------------------

    def _send(self, opcode: int, payload: bytes) -> None:
        frame = encode_frame(opcode, payload)
        with self._send_lock:
            if self._close_sent:
                raise ConnectionLost("the connection is closing")
            if opcode == OP_CLOSE:
                self._close_sent = True
            self._sock.sendall(frame)

    def send_text(self, text: str) -> None:
        self._send(OP_TEXT, text.encode("utf-8"))

    def send_binary(self, data: bytes) -> None:
        self._send(OP_BINARY, data)

    def ping(self, payload: bytes = b"") -> None:
        self._send(OP_PING, payload)

    # -- receiving --------------------------------------------------------------------------

    def _fill(self, n: int) -> None:
        """Reads until ``n`` bytes are buffered; a silent peer gets a ping, then is declared lost."""
        pinged = False
        while len(self._buf) < n:
            pending = isinstance(self._sock, ssl.SSLSocket) and self._sock.pending() > 0
            if not pending:
                try:
                    ready, _, _ = select.select([self._sock], [], [], self._keepalive)
                except (OSError, ValueError) as e:
                    raise ConnectionLost(f"the connection to the gateway broke: {e}") from e
                if not ready:
                    if pinged:
                        raise ConnectionLost(f"the gateway sent nothing for {2 * self._keepalive:g} s, not even a pong: the connection is lost")
                    pinged = True
                    try:
                        self.ping(b"paddock")
                    except OSError as e:
                        raise ConnectionLost(f"the connection to the gateway broke: {e}") from e
                    continue
            try:
                chunk = self._sock.recv(65536)
            except OSError as e:
                raise ConnectionLost(f"the connection to the gateway broke: {e}") from e
            if not chunk:
                raise ConnectionLost("the gateway closed the connection without a close frame")
            self._buf += chunk
            pinged = False

    def _take(self, n: int) -> bytes:
        self._fill(n)
        out = bytes(self._buf[:n])
        del self._buf[:n]
        return out

    def _frame(self) -> Tuple[bool, int, bytes]:
        b0, b1 = self._take(2)
        if b0 & 0x70:
            raise ProtocolViolation("reserved bits set (no extension was negotiated)")
        n = b1 & 0x7F
        if n == 126:
            (n,) = struct.unpack("!H", self._take(2))
        elif n == 127:
            (n,) = struct.unpack("!Q", self._take(8))
        if n > MAX_MESSAGE_BYTES:
            raise ProtocolViolation(f"frame of {n} bytes exceeds the {MAX_MESSAGE_BYTES} byte limit")
        key = self._take(4) if b1 & 0x80 else None
        payload = self._take(n)
        return bool(b0 & 0x80), b0 & 0x0F, mask(payload, key) if key else payload

    def recv(self) -> Message:
        """The next data message. Raises ``Closed`` on the server's close frame (answering it),
        ``ConnectionLost`` when the connection ends or goes silent without one."""
        opcode: Optional[int] = None
        parts: list[bytes] = []
        size = 0
        while True:
            fin, op, payload = self._frame()
            if op >= 0x8:
                if not fin or len(payload) > 125:
                    raise ProtocolViolation("fragmented or oversized control frame")
                if op == OP_PING:
                    try:
                        self._send(OP_PONG, payload)
                    except (OSError, ConnectionLost):
                        pass
                elif op == OP_CLOSE:
                    code = struct.unpack("!H", payload[:2])[0] if len(payload) >= 2 else None
                    reason = payload[2:].decode("utf-8", "replace")
                    self._answer_close(payload[:2])
                    raise Closed(code, reason)
                continue
            if op == OP_CONTINUATION:
                if opcode is None:
                    raise ProtocolViolation("continuation frame without a message")
            elif op in (OP_TEXT, OP_BINARY):
                if opcode is not None:
                    raise ProtocolViolation("new message inside a fragmented one")
                opcode = op
            else:
                raise ProtocolViolation(f"unknown opcode {op}")
            size += len(payload)
            if size > MAX_MESSAGE_BYTES:
                raise ProtocolViolation(f"message exceeds the {MAX_MESSAGE_BYTES} byte limit")
            parts.append(payload)
            if fin:
                return Message(opcode, b"".join(parts))

    def _answer_close(self, code: bytes) -> None:
        try:
            self._send(OP_CLOSE, code)
        except (OSError, ConnectionLost):
            pass
        self._shutdown()

    # -- closing ----------------------------------------------------------------------------

    def close(self, code: int = 1000) -> None:
        """Sends a close frame (if none was sent) and drops the connection. Safe from any thread;
        a thread blocked in ``recv`` wakes up with ``ConnectionLost`` or ``Closed``."""
        if self._closing:
            return
        self._closing = True
        try:
            self._send(OP_CLOSE, struct.pack("!H", code))
        except (OSError, ConnectionLost):
            pass
        self._shutdown()

    def _shutdown(self) -> None:
        try:
            self._sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self._sock.close()


def _read_handshake(sock: socket.socket) -> Tuple[int, Dict[str, str], bytes]:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(4096)
        if not chunk:
            raise ConnectionLost("the gateway closed the connection during the WebSocket handshake")
        data += chunk
        if len(data) > _MAX_HANDSHAKE_BYTES:
            raise ProtocolViolation("oversized handshake answer")
    head, rest = data.split(b"\r\n\r\n", 1)
    lines = head.decode("latin-1").split("\r\n")
    status_parts = lines[0].split(" ", 2)
    if len(status_parts) < 2 or not status_parts[1].isdigit():
        raise ProtocolViolation(f"malformed status line {lines[0]!r}")
    headers: Dict[str, str] = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return int(status_parts[1]), headers, rest


def _read_body(sock: socket.socket, headers: Dict[str, str], rest: bytes) -> bytes:
    """The body of a refused upgrade (an error JSON), read up to its length or the connection's end."""
    length = int(headers["content-length"]) if headers.get("content-length", "").isdigit() else None
    body = rest
    try:
        while (length is None or len(body) < length) and len(body) < _MAX_HANDSHAKE_BYTES:
            chunk = sock.recv(4096)
            if not chunk:
                break
            body += chunk
    except OSError:
        pass
    return body[:length] if length is not None else body
