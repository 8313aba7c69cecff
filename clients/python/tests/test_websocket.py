"""The WebSocket client's framing over a real socket pair, against frames written by hand the
way a server writes them (RFC 6455): lengths at every boundary, masking, fragments, ping/pong,
close, and a silent peer."""

from __future__ import annotations

import socket
import struct
import threading
import time
import unittest
from typing import Tuple

from paddock._websocket import OP_BINARY, OP_CLOSE, OP_PING, OP_PONG, OP_TEXT, Closed, ConnectionLost, WebSocket, accept_key, encode_frame, mask


def server_frame(opcode: int, payload: bytes, fin: bool = True) -> bytes:
    """A frame as a server sends it: unmasked."""
    head = bytearray([(0x80 if fin else 0) | opcode])
    n = len(payload)
    if n < 126:
        head.append(n)
    elif n < 1 << 16:
        head += bytes([126]) + struct.pack("!H", n)
    else:
        head += bytes([127]) + struct.pack("!Q", n)
    return bytes(head) + payload


def read_client_frame(sock: socket.socket) -> Tuple[int, bytes]:
    """Reads one (masked) client frame; returns its opcode and unmasked payload."""

    def exact(n: int) -> bytes:
        out = b""
        while len(out) < n:
            chunk = sock.recv(n - len(out))
            if not chunk:
                raise EOFError
            out += chunk
        return out

    b0, b1 = exact(2)
    assert b1 & 0x80, "client frames must be masked"
    n = b1 & 0x7F
    if n == 126:
        (n,) = struct.unpack("!H", exact(2))
    elif n == 127:
        (n,) = struct.unpack("!Q", exact(8))
    key = exact(4)
    return b0 & 0x0F, mask(exact(n), key)


class Framing(unittest.TestCase):
    def setUp(self) -> None:
        self.client_sock, self.server = socket.socketpair()
        self.ws = WebSocket(self.client_sock, b"", keepalive=5.0)
        self.addCleanup(self.server.close)
        self.addCleanup(self.ws.close)

    def test_rfc_examples(self) -> None:
        self.assertEqual(accept_key("dGhlIHNhbXBsZSBub25jZQ=="), "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
        # "Hello" masked with 37 fa 21 3d (RFC 6455 section 5.7).
        self.assertEqual(encode_frame(OP_TEXT, b"Hello", bytes.fromhex("37fa213d")), bytes.fromhex("818537fa213d7f9f4d5158"))

    def test_every_length_encoding_both_ways(self) -> None:
        for n in (0, 1, 125, 126, 65535, 65536, 200_000):
            payload = bytes(i % 251 for i in range(n))
            threading.Thread(target=self.server.sendall, args=(server_frame(OP_BINARY, payload),), daemon=True).start()
            msg = self.ws.recv()
            self.assertEqual((msg.opcode, msg.data), (OP_BINARY, payload), n)
            sender = threading.Thread(target=self.ws.send_binary, args=(payload,), daemon=True)
            sender.start()
            self.assertEqual(read_client_frame(self.server), (OP_BINARY, payload), n)
            sender.join()

    def test_fragments_and_control_frames_between_them(self) -> None:
        self.server.sendall(server_frame(OP_TEXT, b"hel", fin=False) + server_frame(OP_PING, b"hb") + server_frame(0x0, b"lo", fin=True))
        msg = self.ws.recv()
        self.assertEqual((msg.is_text, msg.data), (True, b"hello"))
        self.assertEqual(read_client_frame(self.server), (OP_PONG, b"hb"))

    def test_the_close_handshake(self) -> None:
        self.server.sendall(server_frame(OP_CLOSE, struct.pack("!H", 1000) + b"exit"))
        with self.assertRaises(Closed) as cm:
            self.ws.recv()
        self.assertEqual((cm.exception.code, cm.exception.reason), (1000, "exit"))
        self.assertEqual(read_client_frame(self.server), (OP_CLOSE, struct.pack("!H", 1000)))

    def test_a_dropped_connection(self) -> None:
        self.server.sendall(server_frame(OP_TEXT, b"partial")[:4])
        self.server.close()
        with self.assertRaisesRegex(ConnectionLost, "without a close frame"):
            self.ws.recv()

    def test_a_silent_peer_is_pinged_then_declared_lost(self) -> None:
        ws = WebSocket(self.client_sock, b"", keepalive=0.3)
        t0 = time.monotonic()
        with self.assertRaisesRegex(ConnectionLost, "not even a pong"):
            ws.recv()
        self.assertGreaterEqual(time.monotonic() - t0, 0.5)
        self.assertEqual(read_client_frame(self.server)[0], OP_PING)

    def test_a_peer_that_answers_pings_stays_connected(self) -> None:
        ws = WebSocket(self.client_sock, b"", keepalive=0.2)

        def serve() -> None:
            op, payload = read_client_frame(self.server)
            self.assertEqual(op, OP_PING)
            self.server.sendall(server_frame(OP_PONG, payload))
            time.sleep(0.3)
            self.server.sendall(server_frame(OP_TEXT, b"late but alive"))

        threading.Thread(target=serve, daemon=True).start()
        self.assertEqual(ws.recv().data, b"late but alive")
