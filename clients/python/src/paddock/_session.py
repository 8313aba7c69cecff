"""``Session``: sandboxes that share defaults and are stopped together."""

from __future__ import annotations

import threading
from types import TracebackType
from typing import TYPE_CHECKING, Any, List, Optional, Sequence, Type

from ._defaults import SandboxDefaults
from ._operation import OperationRef
from .exceptions import CWSandboxError, SandboxError

if TYPE_CHECKING:
    from ._sandbox import Sandbox


class Session:
    """Sandboxes created with shared ``defaults`` (a sandbox's own values win; tags,
    environment variables and annotations merge). ``close()`` (or leaving ``with``) stops every
    sandbox the session holds."""

    def __init__(self, defaults: Optional[SandboxDefaults] = None) -> None:
        self.defaults = defaults or SandboxDefaults()
        self._sandboxes: List[Sandbox] = []
        self._lock = threading.Lock()

    def sandbox(self, *args: str, **options: Any) -> Sandbox:
        """A sandbox with the session's defaults, created on ``start()`` or on first use."""
        from ._sandbox import Sandbox

        sb = Sandbox(command=args[0] if args else None, args=list(args[1:]), defaults=self.defaults, **options)
        return self.adopt(sb)

    def run(self, *args: str, **options: Any) -> Sandbox:
        """``sandbox(...)`` started at once (returns when the platform accepted it)."""
        sb = self.sandbox(*args, **options)
        sb.start().result()
        return sb

    def adopt(self, sandbox: Sandbox) -> Sandbox:
        """Makes ``close()`` stop ``sandbox`` too."""
        with self._lock:
            if sandbox not in self._sandboxes:
                self._sandboxes.append(sandbox)
        return sandbox

    @property
    def sandbox_count(self) -> int:
        with self._lock:
            return len(self._sandboxes)

    def _connection(self) -> dict[str, Any]:
        return {"defaults": self.defaults}

    def list(self, **filters: Any) -> OperationRef[List[Sandbox]]:
        """``Sandbox.list`` with the session's tags added to ``tags``."""
        from ._sandbox import Sandbox

        tags: Sequence[str] = [*self.defaults.tags, *(filters.pop("tags", None) or [])]
        return Sandbox.list(tags=tags or None, **self._connection(), **filters)

    def from_id(self, sandbox_id: str) -> OperationRef[Sandbox]:
        """``Sandbox.from_id``, adopted by the session."""
        from ._sandbox import Sandbox

        found = Sandbox.from_id(sandbox_id, **self._connection())
        return OperationRef.start(lambda: self.adopt(found.result()), "paddock-adopt")

    def close(self) -> OperationRef[None]:
        """Stops every sandbox of the session (in parallel); raises ``SandboxError`` naming the
        ones that could not be stopped."""
        with self._lock:
            sandboxes, self._sandboxes = self._sandboxes, []

        def run() -> None:
            refs = [(sb, sb.stop(missing_ok=True)) for sb in sandboxes]
            failed: List[str] = []
            for sb, ref in refs:
                try:
                    ref.result()
                except CWSandboxError as e:
                    failed.append(f"{sb.sandbox_id}: {e}")
            if failed:
                raise SandboxError(f"{len(failed)} sandbox(es) could not be stopped: {'; '.join(failed)}")

        return OperationRef.start(run, "paddock-session-close")

    def __enter__(self) -> Session:
        return self

    def __exit__(self, exc_type: Optional[Type[BaseException]], exc: Optional[BaseException], tb: Optional[TracebackType]) -> None:
        try:
            self.close().result()
        except CWSandboxError:
            if exc is None:
                raise
