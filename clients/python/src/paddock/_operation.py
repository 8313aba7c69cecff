"""``OperationRef``: the handle most calls return, both ``.result()``-able and awaitable."""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from typing import Any, Callable, Generator, Generic, Optional, TypeVar

T = TypeVar("T")


def _resolve(future: concurrent.futures.Future[T], fn: Callable[[], T]) -> None:
    if not future.set_running_or_notify_cancel():
        return
    try:
        future.set_result(fn())
    except BaseException as e:  # noqa: BLE001 - handed to whoever waits on the future
        future.set_exception(e)


class OperationRef(Generic[T]):
    """An operation already under way. ``result()`` blocks for its value (or raises its error);
    ``await ref`` does the same without blocking an event loop. Never call ``result()`` from a
    coroutine: it blocks the loop's thread.
    """

    def __init__(self, future: concurrent.futures.Future[T]) -> None:
        self._future = future

    @classmethod
    def start(cls, fn: Callable[[], T], name: str = "paddock-op") -> OperationRef[T]:
        """Runs ``fn`` on a daemon thread (a hung gateway never blocks interpreter exit)."""
        future: concurrent.futures.Future[T] = concurrent.futures.Future()
        threading.Thread(target=_resolve, args=(future, fn), name=name, daemon=True).start()
        return cls(future)

    @classmethod
    def completed(cls, value: T) -> OperationRef[T]:
        future: concurrent.futures.Future[T] = concurrent.futures.Future()
        future.set_result(value)
        return cls(future)

    @classmethod
    def failed(cls, error: BaseException) -> OperationRef[T]:
        future: concurrent.futures.Future[T] = concurrent.futures.Future()
        future.set_exception(error)
        return cls(future)

    def result(self, timeout: Optional[float] = None) -> T:
        """The operation's value; raises its error, or ``TimeoutError`` after ``timeout`` seconds."""
        try:
            return self._future.result(timeout)
        except concurrent.futures.TimeoutError:
            raise TimeoutError(f"the operation did not complete within {timeout} s") from None

    def done(self) -> bool:
        return self._future.done()

    def exception(self, timeout: Optional[float] = None) -> Optional[BaseException]:
        """The operation's error (``None`` if it succeeded), waiting up to ``timeout`` seconds."""
        try:
            return self._future.exception(timeout)
        except concurrent.futures.TimeoutError:
            raise TimeoutError(f"the operation did not complete within {timeout} s") from None

    def add_done_callback(self, fn: Callable[[OperationRef[T]], Any]) -> None:
        self._future.add_done_callback(lambda _f: fn(self))

    def __await__(self) -> Generator[Any, None, T]:
        return asyncio.wrap_future(self._future).__await__()
