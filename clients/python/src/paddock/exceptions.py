"""Errors raised by the client.

Every error the gateway answers with becomes the most specific class below and keeps what the
platform said: the Connect ``code`` (``failed_precondition``...), the ``reason`` of its
``google.rpc.ErrorInfo`` detail (``CWSANDBOX_NO_SUITABLE_RUNNER``...), its ``metadata``, the
field violations of its ``google.rpc.BadRequest`` detail and the ``retry_delay`` of a
``google.rpc.RetryInfo`` detail. Callers branch on the class or on ``reason``, never on messages.

The tree::

    CWSandboxError
     ├─ CWSandboxAuthenticationError ─ CWSandboxPermissionDeniedError
     ├─ CWSandboxValidationError ─ SandboxValidationError
     └─ SandboxError
         ├─ SandboxNotRunningError ─ SandboxUnavailableError
         ├─ SandboxTimeoutError ─ SandboxRequestTimeoutError, SandboxCommandTimeoutError
         ├─ SandboxTerminatedError, SandboxFailedError, SandboxNotFoundError
         ├─ SandboxExecutionError ─ SandboxStreamBackpressureError, SandboxStreamTruncatedError
         ├─ SandboxFileError, SandboxResourceExhaustedError, SandboxTerminalStateUnavailableError
         ├─ SandboxProtocolError
         └─ NoSuitableRunnerError
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Optional, Type

if TYPE_CHECKING:
    from ._types import ProcessResult

#: Connect codes worth retrying with backoff: the same request may succeed later, unchanged.
RETRYABLE_CODES = frozenset({"unavailable", "resource_exhausted", "deadline_exceeded"})


@dataclass(frozen=True)
class FieldViolation:
    """One broken rule on one field (``field`` is a dotted path, ``rule`` names the rule).

    For a placement refusal ``constraint`` is the id of the runner whose policy refused.
    """

    field: str
    rule: str
    description: str
    constraint: Optional[str] = None
    requested: Any = None
    limit: Any = None


class CWSandboxError(Exception):
    """Base class of every error of this client."""

    def __init__(
        self,
        message: str,
        *,
        code: Optional[str] = None,
        reason: Optional[str] = None,
        metadata: Optional[Mapping[str, str]] = None,
        violations: Optional[List[FieldViolation]] = None,
        retry_delay: Optional[float] = None,
        http_status: Optional[int] = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        #: Connect code of the answer (``invalid_argument``, ``unavailable``...), if any.
        self.code = code
        #: The platform's reason code (``CWSANDBOX_SANDBOX_NOT_FOUND``...), if it gave one.
        self.reason = reason
        self.metadata: Dict[str, str] = dict(metadata or {})
        self.violations: List[FieldViolation] = list(violations or [])
        #: Seconds the platform asked to wait before retrying (``RetryInfo``), if it did.
        self.retry_delay = retry_delay
        self.http_status = http_status

    @property
    def retryable(self) -> bool:
        """Whether sending the same request again later may succeed."""
        return self.code in RETRYABLE_CODES

    def __str__(self) -> str:
        return f"{self.message} ({self.reason})" if self.reason else self.message


class CWSandboxAuthenticationError(CWSandboxError):
    """The API key is missing, malformed, unknown or revoked."""


class CWSandboxPermissionDeniedError(CWSandboxAuthenticationError):
    """The key is valid but may not do this (role, or the caller's address is not allowed)."""


class CWSandboxValidationError(CWSandboxError):
    """The request was refused as invalid; ``violations`` name the fields and rules."""


class SandboxValidationError(CWSandboxValidationError):
    """A sandbox request (spec, command, path...) was refused as invalid."""


class SandboxError(CWSandboxError):
    """An operation on a sandbox failed."""


class SandboxNotRunningError(SandboxError):
    """The sandbox is not running (not started yet, or already gone)."""


class SandboxUnavailableError(SandboxNotRunningError):
    """The sandbox or its runner cannot be reached right now; retrying later may succeed."""


class SandboxTimeoutError(SandboxError):
    """Something did not happen in time."""


class SandboxRequestTimeoutError(SandboxTimeoutError):
    """A request to the gateway did not complete in time."""


class SandboxCommandTimeoutError(SandboxTimeoutError):
    """A command ran longer than its ``timeout_seconds`` and was killed."""


class SandboxTerminatedError(SandboxError):
    """The sandbox was stopped (by a user or by its lifetime) before the operation completed."""


class SandboxFailedError(SandboxError):
    """The sandbox failed (it could not start, ran out of memory, lost its runner...)."""

    def __init__(self, message: str, *, sandbox_id: str, state_reason: Optional[str], **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.sandbox_id = sandbox_id
        #: Why it failed, as the platform says (``FAILED_TO_START``, ``RUNNER_LOST``...).
        self.state_reason = state_reason


class SandboxNotFoundError(SandboxError):
    """No such sandbox (or it belongs to another organization)."""


class SandboxExecutionError(SandboxError):
    """A command failed: a non-zero exit with ``check=True``, or its stream broke."""

    def __init__(self, message: str, *, exec_result: Optional[ProcessResult] = None, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        #: The command's outcome when it exited (``check=True`` and a non-zero exit).
        self.exec_result = exec_result


class SandboxStreamBackpressureError(SandboxExecutionError):
    """The command's stream was ended because a side could not keep up."""


class SandboxStreamTruncatedError(SandboxExecutionError):
    """The command's output was cut short by the platform."""


class SandboxFileError(SandboxError):
    """A file operation failed (missing file, a directory, too large...)."""


class SandboxResourceExhaustedError(SandboxError):
    """A quota or the runners' capacity is exhausted; retry later."""


class SandboxTerminalStateUnavailableError(SandboxError):
    """The sandbox ended but the platform no longer knows how."""


class SandboxProtocolError(SandboxError):
    """The gateway's answer did not follow its protocol."""


class NoSuitableRunnerError(SandboxError):
    """No runner's policy admits the sandbox (``CWSANDBOX_NO_SUITABLE_RUNNER``).

    ``violations`` holds one entry per broken constraint per runner; ``runner_violations`` groups
    them by runner id, which says what to change in the request, or what to ask an admin for.
    """

    def __str__(self) -> str:
        lines = [super().__str__()] + [f"  {v.description}" for v in self.violations if v.description]
        return "\n".join(lines)

    @property
    def runner_violations(self) -> Dict[str, List[FieldViolation]]:
        out: Dict[str, List[FieldViolation]] = {}
        for v in self.violations:
            out.setdefault(v.constraint or "", []).append(v)
        return out


_BY_REASON: Dict[str, Type[CWSandboxError]] = {
    "CWSANDBOX_SANDBOX_NOT_FOUND": SandboxNotFoundError,
    "CWSANDBOX_SANDBOX_NOT_RUNNING": SandboxNotRunningError,
    "CWSANDBOX_SANDBOX_TERMINATED": SandboxTerminatedError,
    "CWSANDBOX_NO_SUITABLE_RUNNER": NoSuitableRunnerError,
    "CWSANDBOX_RUNNER_UNAVAILABLE": SandboxUnavailableError,
    "CWSANDBOX_RUNNER_AT_CAPACITY": SandboxResourceExhaustedError,
    "CWSANDBOX_RUNNER_OVERLOADED": SandboxResourceExhaustedError,
    "CWSANDBOX_RUNNER_CAPACITY_EXHAUSTED": SandboxResourceExhaustedError,
    "CWSANDBOX_COMMAND_TIMEOUT": SandboxCommandTimeoutError,
    "CWSANDBOX_FILE_NOT_FOUND": SandboxFileError,
    "CWSANDBOX_FILE_IS_DIRECTORY": SandboxFileError,
    "CWSANDBOX_FILE_PERMISSION_DENIED": SandboxFileError,
    "CWSANDBOX_FILE_TOO_LARGE": SandboxFileError,
    "CWSANDBOX_FILE_TRUNCATED": SandboxFileError,
    "CWSANDBOX_FILE_IO_FAILED": SandboxFileError,
    "CWSANDBOX_INVALID_REQUEST": SandboxValidationError,
    "CWSANDBOX_RESOURCE_CEILING_EXCEEDED": SandboxValidationError,
    "PADDOCK_VALIDATION_FAILED": SandboxValidationError,
    "PADDOCK_SOURCE_IP_NOT_ALLOWED": CWSandboxPermissionDeniedError,
}

_BY_CODE: Dict[str, Type[CWSandboxError]] = {
    "unauthenticated": CWSandboxAuthenticationError,
    "permission_denied": CWSandboxPermissionDeniedError,
    "invalid_argument": SandboxValidationError,
    "not_found": SandboxNotFoundError,
    "resource_exhausted": SandboxResourceExhaustedError,
    "unavailable": SandboxUnavailableError,
    "deadline_exceeded": SandboxRequestTimeoutError,
}

_DURATION = re.compile(r"^(\d+(?:\.\d+)?)s$")


def _violation(raw: Mapping[str, Any]) -> FieldViolation:
    constraint = raw.get("constraint")
    return FieldViolation(
        field=str(raw.get("field", "")),
        rule=str(raw.get("rule", "")),
        description=str(raw.get("description", "")),
        constraint=str(constraint) if constraint is not None else None,
        requested=raw.get("requested"),
        limit=raw.get("limit"),
    )


def error_from_body(body: Mapping[str, Any], http_status: Optional[int] = None) -> CWSandboxError:
    """The most specific error for a gateway error body ``{code, message, details}``."""
    code = str(body.get("code", "unknown"))
    message = str(body.get("message", "")) or f"the gateway answered {code}"
    reason: Optional[str] = None
    metadata: Dict[str, str] = {}
    violations: List[FieldViolation] = []
    retry_delay: Optional[float] = None
    details = body.get("details")
    for d in details if isinstance(details, list) else []:
        if not isinstance(d, dict):
            continue
        if isinstance(d.get("reason"), str):
            reason = d["reason"]
            raw_meta = d.get("metadata")
            metadata = {str(k): str(v) for k, v in raw_meta.items()} if isinstance(raw_meta, dict) else {}
        raw_violations = d.get("fieldViolations")
        if isinstance(raw_violations, list):
            violations = [_violation(v) for v in raw_violations if isinstance(v, dict)]
        delay = d.get("retryDelay")
        if isinstance(delay, str) and _DURATION.match(delay):
            retry_delay = float(delay[:-1])
    cls = (_BY_REASON.get(reason) if reason else None) or _BY_CODE.get(code) or SandboxError
    return cls(message, code=code, reason=reason, metadata=metadata, violations=violations, retry_delay=retry_delay, http_status=http_status)


def error_from_http(status: int, body: bytes) -> CWSandboxError:
    """The error for a non-2xx HTTP answer, whether or not its body is the JSON error model."""
    try:
        parsed = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        parsed = None
    if isinstance(parsed, dict) and isinstance(parsed.get("code"), str):
        return error_from_body(parsed, status)
    code = "unavailable" if status in (502, 503, 504) else "internal" if status >= 500 else "invalid_argument"
    text = body[:200].decode("utf-8", "replace")
    cls = SandboxUnavailableError if code == "unavailable" else SandboxError
    return cls(f"HTTP {status}: {text}", code=code, http_status=status)
