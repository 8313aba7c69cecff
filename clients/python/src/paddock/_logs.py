"""The main process's log, from ``GET /v1/sandboxes/{id}/logs`` (NDJSON), as lines.

Each NDJSON line is ``{"offset", "stream", "data" (base64), "time"}``; ``offset`` is where
``data`` starts in the sandbox's combined log, so a dropped ``follow`` stream resumes with
``fromOffset`` exactly where it stopped (no gap, no duplicate). An error after the answer began
arrives as a last line ``{"error": {code, message, details}}``.
"""

from __future__ import annotations

import base64
import http.client
import json
import socket
import threading
import time
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Dict, Optional, Union

from ._http import Answer, Transport, backoff_delay, sandbox_path
from ._streams import LineDecoder, StreamReader
from .exceptions import CWSandboxError, SandboxProtocolError, SandboxTimeoutError, SandboxUnavailableError, error_from_body

#: A follow stream dropped this many times in a row (without an entry in between) gives up.
MAX_RESUMES = 3
#: A follow stream may be silent for long; this only bounds one read (a resume follows).
_FOLLOW_READ_TIMEOUT = 3600.0


def _since(value: Union[datetime, str, None]) -> Optional[str]:
    if value is None or isinstance(value, str):
        return value
    if value.tzinfo is None:
        raise ValueError("since_time must be timezone-aware (for example datetime.now(timezone.utc))")
    return value.isoformat()


@dataclass(frozen=True)
class LogQuery:
    """What ``stream_logs`` asks for (see it for the meaning of each field)."""

    follow: bool = False
    tail_lines: Optional[int] = None
    since_time: Union[datetime, str, None] = None
    timestamps: bool = False
    timeout_seconds: Optional[float] = None


class _LogPump:
    def __init__(self, transport: Transport, sandbox_id: str, reader: StreamReader[str], query: LogQuery) -> None:
        if query.tail_lines is not None and (not isinstance(query.tail_lines, int) or query.tail_lines < 0):
            raise ValueError("tail_lines must be a non-negative integer")
        self._transport = transport
        self._path = sandbox_path(sandbox_id, "/logs")
        self._reader = reader
        self._follow = query.follow
        self._tail_lines = query.tail_lines
        self._since_time = _since(query.since_time)
        self._timestamps = query.timestamps
        self._deadline = time.monotonic() + query.timeout_seconds if query.timeout_seconds is not None else None
        self._timeout_seconds = query.timeout_seconds
        self._decoder = LineDecoder()
        self._from_offset: Optional[int] = None
        self._line_time: Optional[str] = None
        self._answer: Optional[Answer] = None
        self._lock = threading.Lock()
        reader._on_abandon = self._abandon

    def _abandon(self) -> None:
        with self._lock:
            answer = self._answer
        if answer is not None:
            answer.abort()

    def _query(self) -> Dict[str, Any]:
        q: Dict[str, Any] = {"follow": self._follow}
        if self._from_offset is not None:
            q["fromOffset"] = self._from_offset
        else:
            q["tailLines"] = self._tail_lines
            q["sinceTime"] = self._since_time
        return q

    def _read_timeout(self) -> float:
        base = _FOLLOW_READ_TIMEOUT if self._follow else self._transport.config.request_timeout_seconds
        if self._deadline is None:
            return base
        return max(0.05, min(base, self._deadline - time.monotonic()))

    def _emit(self, text_lines: Any) -> None:
        for line in text_lines:
            if self._timestamps:
                line = f"{self._line_time} {line}"
            self._reader._put(line)

    def _entry(self, raw: bytes) -> None:
        try:
            entry = json.loads(raw.decode("utf-8"))
        except ValueError as e:
            raise SandboxProtocolError(f"malformed log line {raw[:100]!r}: {e}") from e
        if not isinstance(entry, dict):
            raise SandboxProtocolError(f"malformed log line {raw[:100]!r}")
        if "error" in entry:
            err = entry["error"]
            raise error_from_body(err) if isinstance(err, dict) else SandboxProtocolError("the log stream ended with an error")
        data = base64.b64decode(str(entry.get("data", "")))
        offset = entry.get("offset")
        if isinstance(offset, int):
            self._from_offset = offset + len(data)
        when = str(entry.get("time", ""))
        if self._line_time is None:
            self._line_time = when
        for line in self._decoder.feed(data):
            self._emit([line])
            self._line_time = when  # the next line starts inside this entry...
        if not self._decoder.has_pending:
            self._line_time = None  # ...unless this entry ended on a newline

    def _one_stream(self) -> bool:
        """Reads one answer to its end. True when the log ended; False when the connection broke
        after at least one entry (worth resuming at once)."""
        got_entry = False
        with self._transport.exchange("GET", self._path, query=self._query(), timeout=self._read_timeout(), retry=False) as answer:
            with self._lock:
                self._answer = answer
            try:
                while not self._reader.abandoned:
                    raw = answer.response.readline()
                    if not raw:
                        return True
                    if raw.strip():
                        self._entry(raw)
                        got_entry = True
            except (OSError, http.client.HTTPException) as e:
                if self._reader.abandoned:
                    return True
                if isinstance(e, socket.timeout) and self._deadline is not None and time.monotonic() >= self._deadline:
                    raise SandboxTimeoutError(f"the log stream did not end within {self._timeout_seconds:g} s", code="deadline_exceeded") from None
                if got_entry:
                    return False
                raise SandboxUnavailableError(f"the log stream broke: {e}", code="unavailable") from e
            finally:
                with self._lock:
                    self._answer = None
        return True

    def run(self) -> None:
        resumes = 0
        try:
            while not self._reader.abandoned:
                try:
                    if self._one_stream():
                        break
                    resumes = 0  # progress was made: the next break starts a fresh budget
                except SandboxUnavailableError as e:
                    if not self._follow or resumes >= MAX_RESUMES or self._reader.abandoned:
                        raise SandboxUnavailableError(
                            f"the log stream was lost{' after ' + str(resumes) + ' resume attempts' if self._follow else ''}: {e.message}",
                            code="unavailable",
                        ) from e
                    time.sleep(backoff_delay(resumes, 0.5, 4.0))
                    resumes += 1
            self._emit(self._decoder.flush())
            self._reader._close(None)
        except CWSandboxError as e:
            self._reader._close(e)
        except BaseException as e:  # noqa: BLE001 - the consumer must hear of it
            self._reader._close(e)


def open_log_stream(transport: Transport, sandbox_id: str, query: LogQuery) -> StreamReader[str]:
    """Starts reading the log on a daemon thread; the lines arrive in the returned reader."""
    reader: StreamReader[str] = StreamReader()
    pump = _LogPump(transport, sandbox_id, reader, query)
    threading.Thread(target=pump.run, name="paddock-logs", daemon=True).start()
    return reader
