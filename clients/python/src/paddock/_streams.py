"""Live streams: a reader to iterate (output lines, log lines, file chunks) and the stdin writer."""

from __future__ import annotations

import asyncio
import codecs
import concurrent.futures
import queue
import threading
from typing import Callable, Generic, Iterator, List, Optional, TypeVar, Union

from ._operation import OperationRef
from .exceptions import SandboxExecutionError

T = TypeVar("T")

#: A line longer than this without a newline is handed out as it is, so memory stays bounded.
MAX_LINE_BYTES = 1024 * 1024
#: stdin travels in chunks of this size; at most STDIN_QUEUE_CHUNKS wait to be sent.
STDIN_CHUNK_BYTES = 64 * 1024
STDIN_QUEUE_CHUNKS = 16


class _End:
    def __init__(self, error: Optional[BaseException]) -> None:
        self.error = error


class StreamReader(Generic[T]):
    """Items as they arrive, for one consumer: ``for item in reader`` or ``async for item in reader``.

    Iteration ends when the stream ends; if it broke, the error is raised where iteration stands.
    """

    def __init__(self) -> None:
        self._items: queue.Queue[Union[T, _End]] = queue.Queue()
        self._end: Optional[_End] = None
        self._closed = False
        self._lock = threading.Lock()
        self._on_abandon: Optional[Callable[[], None]] = None
        self.abandoned = False

    def close(self) -> None:
        """Stops the stream early (the consumer wants no more): the connection behind it is
        dropped and iteration ends."""
        self.abandoned = True
        hook = self._on_abandon
        if hook is not None:
            hook()
        self._close(None)

    def _put(self, item: T) -> None:
        self._items.put(item)

    def _close(self, error: Optional[BaseException] = None) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
        self._items.put(_End(error))

    def __iter__(self) -> Iterator[T]:
        return self

    def __next__(self) -> T:
        if self._end is None:
            item = self._items.get()
            if not isinstance(item, _End):
                return item
            self._end = item
        if self._end.error is not None:
            raise self._end.error
        raise StopIteration

    def __aiter__(self) -> StreamReader[T]:
        return self

    def _next_or_end(self) -> Union[T, _End]:
        # StopIteration cannot travel through a Future: the end comes back as a value.
        try:
            return self.__next__()
        except StopIteration:
            return _End(None)

    async def __anext__(self) -> T:
        item = await asyncio.get_running_loop().run_in_executor(None, self._next_or_end)
        if isinstance(item, _End):
            raise StopAsyncIteration
        return item


class LineDecoder:
    """UTF-8 bytes in, complete lines out (each with its ``\\n``); the rest comes out at ``flush``."""

    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._pending = ""

    def feed(self, data: bytes) -> List[str]:
        self._pending += self._decoder.decode(data)
        lines: List[str] = []
        while True:
            nl = self._pending.find("\n")
            if nl < 0:
                break
            lines.append(self._pending[: nl + 1])
            self._pending = self._pending[nl + 1 :]
        if len(self._pending) > MAX_LINE_BYTES:
            lines.append(self._pending)
            self._pending = ""
        return lines

    @property
    def has_pending(self) -> bool:
        return bool(self._pending)

    def flush(self) -> List[str]:
        rest = self._pending + self._decoder.decode(b"", final=True)
        self._pending = ""
        return [rest] if rest else []


class _Chunk:
    def __init__(self, data: Optional[bytes]) -> None:
        #: ``None`` is the end of stdin.
        self.data = data
        self.future: concurrent.futures.Future[None] = concurrent.futures.Future()
        self.done = OperationRef(self.future)


class StreamWriter:
    """Writes to a command's stdin. ``write`` queues bytes (blocking while 1 MiB is already
    waiting: backpressure), ``close`` queues the end of input after them; both return an
    ``OperationRef`` that completes once the data (or the end) has been sent.
    """

    def __init__(self) -> None:
        self._queue: queue.Queue[_Chunk] = queue.Queue(maxsize=STDIN_QUEUE_CHUNKS)
        self._closed = False
        self._error: Optional[BaseException] = None
        self._lock = threading.Lock()

    @property
    def closed(self) -> bool:
        """True once ``close()`` was called."""
        return self._closed

    def _refused(self, what: str) -> OperationRef[None]:
        if self._error is not None:
            return OperationRef.failed(SandboxExecutionError(f"cannot {what}: {self._error}"))
        return OperationRef.failed(SandboxExecutionError(f"cannot {what}: stdin is closed"))

    def _enqueue(self, chunk: _Chunk) -> None:
        while True:
            if self._error is not None:
                chunk.future.set_exception(SandboxExecutionError(f"stdin is gone: {self._error}"))
                return
            try:
                self._queue.put(chunk, timeout=0.2)
                return
            except queue.Full:
                continue

    def write(self, data: bytes) -> OperationRef[None]:
        """Queues raw bytes for the command's stdin."""
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise TypeError(f"stdin takes bytes, not {type(data).__name__} (use writeline for text)")
        with self._lock:
            if self._closed or self._error is not None:
                return self._refused("write to stdin")
            raw = bytes(data)
            if not raw:
                return OperationRef.completed(None)
            last: Optional[_Chunk] = None
            for off in range(0, len(raw), STDIN_CHUNK_BYTES):
                last = _Chunk(raw[off : off + STDIN_CHUNK_BYTES])
                self._enqueue(last)
            assert last is not None
            return last.done

    def writeline(self, text: str, encoding: str = "utf-8") -> OperationRef[None]:
        """Queues ``text`` and a newline, encoded."""
        return self.write((text + "\n").encode(encoding))

    def close(self) -> OperationRef[None]:
        """Queues the end of input (the command sees EOF). Calling it again changes nothing."""
        with self._lock:
            if self._error is not None:
                return self._refused("close stdin")
            if self._closed:
                return OperationRef.completed(None)
            self._closed = True
            chunk = _Chunk(None)
            self._enqueue(chunk)
            return chunk.done

    # -- the sending side (the exec stream) -------------------------------------------------

    def _next(self, timeout: float) -> Optional[_Chunk]:
        try:
            return self._queue.get(timeout=timeout)
        except queue.Empty:
            return None

    def _fail(self, error: BaseException) -> None:
        """The stream is gone: pending and later writes fail with this error."""
        self._error = error
        while True:
            try:
                chunk = self._queue.get_nowait()
            except queue.Empty:
                return
            chunk.future.set_exception(SandboxExecutionError(f"stdin is gone: {error}"))


def pump_stdin(writer: StreamWriter, send_data: Callable[[bytes], None], send_eof: Callable[[], None], stopped: Callable[[], bool]) -> None:
    """Sends what ``writer`` queues until the end of input or until ``stopped()``."""
    while not stopped():
        chunk = writer._next(0.2)
        if chunk is None:
            continue
        try:
            if chunk.data is None:
                send_eof()
                chunk.future.set_result(None)
                return
            send_data(chunk.data)
            chunk.future.set_result(None)
        except BaseException as e:  # noqa: BLE001 - reported to the writer's callers
            chunk.future.set_exception(SandboxExecutionError(f"stdin write failed: {e}"))
            writer._fail(e)
            return

