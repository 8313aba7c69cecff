"""Commands in a sandbox over the gateway's WebSocket exec stream: ``Process`` and ``TerminalSession``.

The stream (``GET /v1/sandboxes/{id}/exec/stream``): the client's first text frame is ``init``
(argv, env, cwd, tty and its size, timeout), then binary frames carry stdin and text frames carry
``resize``, ``close`` (end of stdin) and ``cancel`` (kill). The server answers ``ready``, then
binary frames whose first byte is the channel (1 stdout, 2 stderr), then ``exit`` (or ``error``).
"""

from __future__ import annotations

import concurrent.futures
import json
import threading
from typing import Any, Dict, Generic, List, Mapping, Optional, Protocol, Sequence, Tuple, TypeVar

from ._http import Transport, sandbox_path
from ._operation import OperationRef
from ._streams import LineDecoder, StreamReader, StreamWriter, pump_stdin
from ._types import ProcessResult, TerminalResult
from ._websocket import Closed, ConnectionLost, ProtocolViolation, WebSocket
from .exceptions import (
    CWSandboxError,
    SandboxCommandTimeoutError,
    SandboxExecutionError,
    SandboxProtocolError,
    SandboxUnavailableError,
    error_from_body,
)

R = TypeVar("R")
CHANNEL_STDOUT = 1
CHANNEL_STDERR = 2


class ExecHost(Protocol):
    """What a command needs from its sandbox."""

    @property
    def sandbox_id(self) -> Optional[str]: ...

    def _transport_for_exec(self) -> Transport: ...

    def _await_running(self) -> str: ...


class _ExecSession(OperationRef[R], Generic[R]):
    """One command's stream, driven by a daemon thread from the moment it is created."""

    def __init__(
        self,
        host: ExecHost,
        command: Sequence[str],
        *,
        cwd: Optional[str],
        env: Optional[Mapping[str, str]],
        timeout_seconds: Optional[float],
        tty: bool,
        width: int,
        height: int,
        keep_stdin: bool,
    ) -> None:
        future: concurrent.futures.Future[R] = concurrent.futures.Future()
        super().__init__(future)
        self.command = tuple(command)
        self._host = host
        self._cwd = cwd
        self._env = dict(env or {})
        self._timeout_seconds = timeout_seconds
        self._tty = tty
        self._size = (width, height)
        self._writer = StreamWriter() if keep_stdin else None
        self._ws: Optional[WebSocket] = None
        self._lock = threading.Lock()
        self._cancel_requested = False
        self._cancel_sent = False
        self._ready = False
        self._finished = threading.Event()
        self._returncode: Optional[int] = None
        self._signal: Optional[str] = None
        self._timed_out = False
        threading.Thread(target=self._run, args=(future,), name="paddock-exec", daemon=True).start()

    # -- subclass hooks -----------------------------------------------------------------------

    def _on_output(self, channel: int, data: bytes) -> None:
        raise NotImplementedError

    def _outcome(self) -> R:
        raise NotImplementedError

    def _close_readers(self, error: Optional[BaseException]) -> None:
        raise NotImplementedError

    # -- control ----------------------------------------------------------------------------

    def _control(self, message: Dict[str, Any]) -> None:
        with self._lock:
            ws = self._ws
        if ws is not None and not self._finished.is_set():
            try:
                ws.send_text(json.dumps(message))
            except (OSError, ConnectionLost):
                pass  # the reader thread reports the broken stream

    def cancel(self) -> None:
        """Asks the runner to kill the command; its result then carries the signal. Before the
        command has started, the kill is sent as soon as it has."""
        with self._lock:
            self._cancel_requested = True
        self._send_cancel_if_due()

    def _send_cancel_if_due(self) -> None:
        # Only once the runner said `ready`: a kill that overtakes the start would be lost.
        with self._lock:
            due = self._cancel_requested and self._ready and not self._cancel_sent
            self._cancel_sent = self._cancel_sent or due
        if due:
            self._control({"type": "cancel"})

    def poll(self) -> Optional[int]:
        """The exit code if the command has exited, else ``None`` (never blocks)."""
        return self._returncode

    @property
    def returncode(self) -> Optional[int]:
        return self._returncode

    def wait(self, timeout: Optional[float] = None) -> int:
        """Blocks until the command exits and returns its exit code (a non-zero code is not an
        error here, whatever ``check`` says). Raises if the stream broke before the exit."""
        try:
            self._future.exception(timeout)
        except concurrent.futures.TimeoutError:
            raise TimeoutError(f"the command did not exit within {timeout} s") from None
        if self._returncode is not None:
            return self._returncode
        error = self._future.exception()
        assert error is not None
        raise error

    # -- the stream -------------------------------------------------------------------------

    def _init_message(self, size: Tuple[int, int]) -> Dict[str, Any]:
        width, height = size
        init: Dict[str, Any] = {"type": "init", "argv": list(self.command), "env": self._env, "tty": self._tty}
        if self._cwd is not None:
            init["cwd"] = self._cwd
        if self._tty:
            init["cols"], init["rows"] = width, height
        if self._timeout_seconds:
            init["timeoutSeconds"] = self._timeout_seconds
        return init

    def _open(self) -> WebSocket:
        sandbox_id = self._host._await_running()
        ws = self._host._transport_for_exec().websocket(sandbox_path(sandbox_id, "/exec/stream"))
        with self._lock:
            sent_size = self._size
        ws.send_text(json.dumps(self._init_message(sent_size)))
        if self._writer is None:
            ws.send_text(json.dumps({"type": "close"}))
        with self._lock:
            self._ws = ws
            size = self._size
        if self._tty and size != sent_size:
            # resize() was called while the stream opened: the init carried the older size.
            ws.send_text(json.dumps({"type": "resize", "cols": size[0], "rows": size[1]}))
        writer = self._writer
        if writer is not None:
            threading.Thread(
                target=pump_stdin,
                args=(writer, ws.send_binary, lambda: ws.send_text(json.dumps({"type": "close"})), self._finished.is_set),
                name="paddock-stdin",
                daemon=True,
            ).start()
        return ws

    def _describe(self) -> str:
        shown = " ".join(self.command)
        return shown if len(shown) <= 80 else shown[:77] + "..."

    def _run(self, future: concurrent.futures.Future[R]) -> None:
        ws: Optional[WebSocket] = None
        error: Optional[BaseException] = None
        try:
            ws = self._open()
            while True:
                msg = ws.recv()
                if not msg.is_text:
                    if msg.data:
                        self._on_output(msg.data[0], msg.data[1:])
                    continue
                frame = json.loads(msg.data.decode("utf-8"))
                if not isinstance(frame, dict):
                    raise SandboxProtocolError(f"unexpected exec frame {msg.data[:100]!r}")
                kind = frame.get("type")
                if kind == "ready":
                    with self._lock:
                        self._ready = True
                    self._send_cancel_if_due()
                elif kind == "exit":
                    code = frame.get("exitCode")
                    self._returncode = code if isinstance(code, int) else -1
                    self._signal = frame.get("signal") if isinstance(frame.get("signal"), str) else None
                    self._timed_out = frame.get("timedOut") is True
                    break
                elif kind == "error":
                    raise error_from_body(frame)
        except CWSandboxError as e:
            error = e
        except ConnectionLost as e:
            error = SandboxUnavailableError(
                f"the exec stream of `{self._describe()}` was lost before the command exited: {e}; its outcome is unknown",
                code="unavailable",
            )
        except Closed as e:
            error = SandboxUnavailableError(f"the gateway ended the exec stream of `{self._describe()}` before the command exited ({e})", code="unavailable")
        except (ProtocolViolation, ValueError) as e:
            error = SandboxProtocolError(f"the exec stream of `{self._describe()}` broke the protocol: {e}")
        except BaseException as e:  # noqa: BLE001 - whatever it is, the caller must hear of it
            error = e
        finally:
            self._finished.set()
            if ws is not None:
                ws.close()
        if self._writer is not None:
            self._writer._fail(error or SandboxExecutionError("the command has exited"))
        if error is not None:
            self._close_readers(error)
            future.set_exception(error)
            return
        self._close_readers(None)
        try:
            future.set_result(self._outcome())
        except BaseException as e:  # noqa: BLE001 - the outcome itself is an error (check, timeout)
            future.set_exception(e)

    def _timeout_error(self) -> SandboxCommandTimeoutError:
        return SandboxCommandTimeoutError(
            f"command `{self._describe()}` ran longer than {self._timeout_seconds:g} s and was killed",
            code="deadline_exceeded",
            reason="CWSANDBOX_COMMAND_TIMEOUT",
        )


class Process(_ExecSession[ProcessResult]):
    """A command running in a sandbox; ``exec()`` returns it at once.

    ``stdout``/``stderr`` yield decoded lines (with their ``\\n``) as they arrive; ``stdin`` is a
    ``StreamWriter`` when ``exec(..., stdin=True)``, else ``None``; ``result()`` (or ``await``)
    gives the ``ProcessResult`` once it exited.
    """

    def __init__(self, host: ExecHost, command: Sequence[str], *, check: bool, stdin: bool, **kwargs: Any) -> None:
        self.stdout: StreamReader[str] = StreamReader()
        self.stderr: StreamReader[str] = StreamReader()
        self._check = check
        self._out: List[bytes] = []
        self._err: List[bytes] = []
        self._decoders = {CHANNEL_STDOUT: LineDecoder(), CHANNEL_STDERR: LineDecoder()}
        super().__init__(host, command, tty=False, width=0, height=0, keep_stdin=stdin, **kwargs)

    @property
    def stdin(self) -> Optional[StreamWriter]:
        return self._writer

    def _on_output(self, channel: int, data: bytes) -> None:
        if channel == CHANNEL_STDOUT:
            self._out.append(data)
            reader = self.stdout
        elif channel == CHANNEL_STDERR:
            self._err.append(data)
            reader = self.stderr
        else:
            return
        for line in self._decoders[channel].feed(data):
            reader._put(line)

    def _close_readers(self, error: Optional[BaseException]) -> None:
        for channel, reader in ((CHANNEL_STDOUT, self.stdout), (CHANNEL_STDERR, self.stderr)):
            for line in self._decoders[channel].flush():
                reader._put(line)
            reader._close(error)

    def _outcome(self) -> ProcessResult:
        out, err = b"".join(self._out), b"".join(self._err)
        result = ProcessResult(
            stdout=out.decode("utf-8", "replace"),
            stderr=err.decode("utf-8", "replace"),
            returncode=self._returncode if self._returncode is not None else -1,
            stdout_bytes=out,
            stderr_bytes=err,
            command=self.command,
            signal=self._signal,
        )
        if self._timed_out:
            raise self._timeout_error()
        if self._check and result.returncode != 0:
            raise SandboxExecutionError(
                f"command `{self._describe()}` exited with code {result.returncode}: {result.stderr.strip()[-500:]}",
                exec_result=result,
            )
        return result


class TerminalSession(_ExecSession[TerminalResult]):
    """An interactive command on a pseudo-terminal (``shell()``): ``output`` yields raw chunks
    (stdout and stderr are one stream on a terminal), ``stdin`` takes keystrokes, ``resize``
    changes the window size."""

    def __init__(self, host: ExecHost, command: Sequence[str], **kwargs: Any) -> None:
        self.output: StreamReader[bytes] = StreamReader()
        self._all: List[bytes] = []
        super().__init__(host, command, tty=True, keep_stdin=True, **kwargs)

    @property
    def stdin(self) -> StreamWriter:
        assert self._writer is not None
        return self._writer

    def resize(self, width: int, height: int) -> None:
        """Sets the terminal's size (columns, rows); the command gets SIGWINCH."""
        if width <= 0 or height <= 0:
            raise ValueError("width and height must be positive")
        with self._lock:
            self._size = (width, height)
            opened = self._ws is not None
        if opened:
            self._control({"type": "resize", "cols": width, "rows": height})

    def _on_output(self, channel: int, data: bytes) -> None:
        if channel in (CHANNEL_STDOUT, CHANNEL_STDERR):
            self._all.append(data)
            self.output._put(data)

    def _close_readers(self, error: Optional[BaseException]) -> None:
        self.output._close(error)

    def _outcome(self) -> TerminalResult:
        if self._timed_out:
            raise self._timeout_error()
        return TerminalResult(
            returncode=self._returncode if self._returncode is not None else -1,
            output=b"".join(self._all),
            command=self.command,
            signal=self._signal,
        )
