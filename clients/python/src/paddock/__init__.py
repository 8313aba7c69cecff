"""Python client for Paddock sandboxes (the gateway's data plane), on the standard library only.

    from paddock import Sandbox

    with Sandbox.run() as sb:                      # returns once accepted, before RUNNING
        print(sb.exec(["echo", "hi"]).result().stdout)

Configuration: ``PADDOCK_GATEWAY_URL`` (default ``http://127.0.0.1:8081``) and
``PADDOCK_API_KEY``, or ``base_url=`` / ``api_key=`` arguments (or ``SandboxDefaults``).
"""

from __future__ import annotations

import concurrent.futures
import time
from typing import Any, List, Optional, Sequence, Tuple, TypeVar, Union, overload

from .__about__ import __version__
from ._defaults import DEFAULT_GATEWAY_URL, SandboxDefaults
from ._operation import OperationRef
from ._process import Process, TerminalSession
from ._sandbox import Sandbox
from ._session import Session
from ._streams import StreamReader, StreamWriter
from ._types import NetworkOptions, PlacementMode, ProcessResult, ResourceOptions, SandboxStatus, TerminalResult
from .exceptions import (
    CWSandboxAuthenticationError,
    CWSandboxError,
    CWSandboxPermissionDeniedError,
    CWSandboxValidationError,
    FieldViolation,
    NoSuitableRunnerError,
    SandboxCommandTimeoutError,
    SandboxError,
    SandboxExecutionError,
    SandboxFailedError,
    SandboxFileError,
    SandboxNotFoundError,
    SandboxNotRunningError,
    SandboxProtocolError,
    SandboxRequestTimeoutError,
    SandboxResourceExhaustedError,
    SandboxStreamBackpressureError,
    SandboxStreamTruncatedError,
    SandboxTerminalStateUnavailableError,
    SandboxTerminatedError,
    SandboxTimeoutError,
    SandboxUnavailableError,
    SandboxValidationError,
)

T = TypeVar("T")
#: What ``wait`` accepts: a sandbox (waited for until it runs) or any operation.
Waitable = Union[Sandbox, OperationRef[Any]]


@overload
def results(refs: OperationRef[T], /) -> T: ...


@overload
def results(refs: Sequence[OperationRef[T]], /) -> List[T]: ...


def results(refs: Union[OperationRef[T], Sequence[OperationRef[T]]], /) -> Union[T, List[T]]:
    """Blocks for one operation's value, or for several (a list, in order)."""
    if isinstance(refs, OperationRef):
        return refs.result()
    return [r.result() for r in refs]


def wait(waitables: Sequence[Waitable], num_returns: Optional[int] = None, timeout: Optional[float] = None) -> Tuple[List[Waitable], List[Waitable]]:
    """Waits until all (or ``num_returns``) of ``waitables`` are done; returns ``(done, pending)``.

    A sandbox is done once it runs (or ended); an operation (a ``Process`` too) once it completed,
    successfully or not.
    """
    if num_returns is not None and num_returns < 1:
        raise ValueError(f"num_returns must be at least 1, got {num_returns}")
    futures = {}
    for w in waitables:
        ref: OperationRef[Any] = OperationRef.start(w.wait) if isinstance(w, Sandbox) else w
        futures[ref._future] = w
    want = len(futures) if num_returns is None else min(num_returns, len(futures))
    deadline = None if timeout is None else time.monotonic() + timeout
    done: List[Waitable] = []
    pending = set(futures)
    while pending and len(done) < want:
        remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
        finished, pending = concurrent.futures.wait(pending, timeout=remaining, return_when=concurrent.futures.FIRST_COMPLETED)
        if not finished:
            break
        done.extend(futures[f] for f in finished)
    extra, done = done[want:], done[:want]
    return done, extra + [futures[f] for f in pending]


__all__ = [
    "__version__",
    "DEFAULT_GATEWAY_URL",
    "CWSandboxAuthenticationError",
    "CWSandboxError",
    "CWSandboxPermissionDeniedError",
    "CWSandboxValidationError",
    "FieldViolation",
    "NetworkOptions",
    "NoSuitableRunnerError",
    "OperationRef",
    "PlacementMode",
    "Process",
    "ProcessResult",
    "ResourceOptions",
    "Sandbox",
    "SandboxCommandTimeoutError",
    "SandboxDefaults",
    "SandboxError",
    "SandboxExecutionError",
    "SandboxFailedError",
    "SandboxFileError",
    "SandboxNotFoundError",
    "SandboxNotRunningError",
    "SandboxProtocolError",
    "SandboxRequestTimeoutError",
    "SandboxResourceExhaustedError",
    "SandboxStatus",
    "SandboxStreamBackpressureError",
    "SandboxStreamTruncatedError",
    "SandboxTerminalStateUnavailableError",
    "SandboxTerminatedError",
    "SandboxTimeoutError",
    "SandboxUnavailableError",
    "SandboxValidationError",
    "Session",
    "StreamReader",
    "StreamWriter",
    "TerminalResult",
    "TerminalSession",
    "Waitable",
    "results",
    "wait",
]
