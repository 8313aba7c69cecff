"""``Sandbox``: one sandbox on the Paddock data plane (the gateway)."""

from __future__ import annotations

import atexit
import base64
import json
import threading
import time
import uuid
from datetime import datetime, timezone
from types import TracebackType
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Set, Type, Union

from ._defaults import DEFAULT_GRACEFUL_SHUTDOWN_SECONDS, ClientConfig, SandboxDefaults, resolve_config
from ._http import Transport, sandbox_path
from ._logs import LogQuery, open_log_stream
from ._operation import OperationRef
from ._process import Process, TerminalSession
from ._spec import SandboxOptions, build_spec
from ._streams import StreamReader
from ._types import SandboxStatus
from .exceptions import (
    CWSandboxError,
    SandboxError,
    SandboxFailedError,
    SandboxNotFoundError,
    SandboxNotRunningError,
    SandboxTerminatedError,
    SandboxTimeoutError,
)

#: Files up to this size travel as base64 in JSON; larger ones as raw bytes (``PUT .../files``).
INLINE_FILE_LIMIT = 4 * 1024 * 1024
#: One long poll lasts at most this long; a longer wait is a series (proxies drop idle requests).
_LONG_POLL_SECONDS = 30.0
#: After a stop, how long (beyond the grace period) the platform gets to confirm the end.
_STOP_CONFIRM_SECONDS = 60.0
#: Ends that are someone's decision rather than a failure (``wait_until_complete``).
_TERMINATION_REASONS = frozenset({"STOPPED_BY_USER", "LIFETIME_EXPIRED"})
_STARTED = frozenset({SandboxStatus.RUNNING, SandboxStatus.PAUSED, SandboxStatus.TERMINATING, SandboxStatus.COMPLETED, SandboxStatus.FAILED, SandboxStatus.TERMINATED})

_transports: Dict[ClientConfig, Transport] = {}
_transports_lock = threading.Lock()
#: Sandboxes this process created and has not stopped: stopped at interpreter exit. Strong
#: references on purpose: a handle the program dropped still names a sandbox left running.
_owned: Set[Sandbox] = set()


def _transport_for(config: ClientConfig) -> Transport:
    with _transports_lock:
        t = _transports.get(config)
        if t is None:
            t = _transports[config] = Transport(config)
        return t


def _parse_time(value: Any) -> Optional[datetime]:
    if not isinstance(value, str) or not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


class Sandbox:
    """A sandbox. ``Sandbox.run(...)`` creates one and returns as soon as the platform accepted
    it (it is usually still starting); ``Sandbox(...)`` only describes one, created on
    ``start()`` or on first use. ``with`` stops it on exit.
    """

    def __init__(
        self,
        *,
        command: Optional[str] = None,
        args: Optional[Sequence[str]] = None,
        defaults: Optional[SandboxDefaults] = None,
        container_image: Optional[str] = None,
        tags: Optional[Sequence[str]] = None,
        base_url: Optional[str] = None,
        api_key: Optional[str] = None,
        request_timeout_seconds: Optional[float] = None,
        max_lifetime_seconds: Optional[float] = None,
        runner_ids: Optional[Sequence[str]] = None,
        resources: Any = None,
        mounted_files: Optional[Sequence[Mapping[str, Any]]] = None,
        network: Any = None,
        environment_variables: Optional[Mapping[str, str]] = None,
        annotations: Optional[Mapping[str, str]] = None,
        placement_mode: Optional[str] = None,
        services: Optional[Sequence[Mapping[str, Any]]] = None,
        file_system_snapshot: Any = None,
    ) -> None:
        d = defaults or SandboxDefaults()
        options = SandboxOptions(
            command=command,
            args=args,
            container_image=container_image,
            tags=tags,
            runner_ids=runner_ids,
            max_lifetime_seconds=max_lifetime_seconds,
            resources=resources,
            mounted_files=mounted_files,
            network=network,
            environment_variables=environment_variables,
            annotations=annotations,
            placement_mode=placement_mode,
            services=services,
            file_system_snapshot=file_system_snapshot,
        )
        self._setup(_transport_for(resolve_config(base_url=base_url, api_key=api_key, request_timeout_seconds=request_timeout_seconds, defaults=d)))
        # Built now, so a bad option fails here, naming itself, before anything is sent.
        self._spec: Optional[Dict[str, Any]] = build_spec(options, d)
        self._request_id = str(uuid.uuid4())

    def _setup(self, transport: Transport) -> None:
        self._transport = transport
        self._config = transport.config
        self._spec = None
        self._request_id = ""
        self._view: Optional[Dict[str, Any]] = None
        self._lock = threading.Lock()
        #: The first snapshot a ``stop_with_snapshot()`` took, once it has.
        self.file_system_snapshot_id: Optional[str] = None
        self._start_ref: Optional[OperationRef[None]] = None
        self._stop_ref: Optional[OperationRef[None]] = None
        self._status_updated_at: Optional[datetime] = None

    @classmethod
    def _attach(cls, transport: Transport, view: Dict[str, Any]) -> Sandbox:
        """A handle on an existing sandbox (listed, or found by id): never stopped at exit."""
        sb = cls.__new__(cls)
        sb._setup(transport)
        sb._apply(view)
        sb._start_ref = OperationRef.completed(None)
        return sb

    # -- creating -----------------------------------------------------------------------------

    @classmethod
    def run(cls, *args: str, **options: Any) -> Sandbox:
        """Creates a sandbox and returns once the platform accepted it (it does not wait for
        RUNNING: call ``wait()``, or just use it). ``args`` are the main command and its
        arguments; without them the sandbox idles until stopped. ``options`` are those of
        ``Sandbox(...)``: ``container_image``, ``resources``, ``tags``, ``runner_ids``,
        ``max_lifetime_seconds``, ``environment_variables``, ``annotations``, ``network``,
        ``mounted_files``, ``placement_mode``, ``services``, ``defaults``, ``base_url``,
        ``api_key``, ``request_timeout_seconds``.
        """
        sb = cls(command=args[0] if args else None, args=list(args[1:]), **options)
        sb.start().result()
        return sb

    @classmethod
    def session(cls, defaults: Optional[SandboxDefaults] = None) -> Session:
        """A ``Session``: sandboxes sharing ``defaults``, all stopped when it closes."""
        return Session(defaults)

    def start(self) -> OperationRef[None]:
        """Sends the create (once; later calls return the same operation)."""
        with self._lock:
            if self._start_ref is None:
                self._start_ref = OperationRef.start(self._create, "paddock-create")
            return self._start_ref

    def _create(self) -> None:
        # The request id makes the create idempotent: a retried request never makes a second sandbox.
        view = self._transport.json("POST", "/v1/sandboxes", json_body={"spec": self._spec, "requestId": self._request_id})
        self._apply(view)
        _owned.add(self)

    def _apply(self, view: Any) -> None:
        if not isinstance(view, dict) or not isinstance(view.get("sandboxId"), str):
            raise CWSandboxError(f"unexpected answer from the gateway: {json.dumps(view)[:200]}")
        self._view = view
        self._status_updated_at = datetime.now(timezone.utc)

    def _started_id(self) -> str:
        self.start().result()
        assert self._view is not None
        return str(self._view["sandboxId"])

    # -- finding ------------------------------------------------------------------------------

    @classmethod
    def from_id(
        cls, sandbox_id: str, *, base_url: Optional[str] = None, api_key: Optional[str] = None, defaults: Optional[SandboxDefaults] = None
    ) -> OperationRef[Sandbox]:
        """A handle on an existing sandbox (from this process or any other). Stopping it is up
        to the caller: unlike the sandboxes a process creates, it is not stopped at exit."""
        transport = _transport_for(resolve_config(base_url=base_url, api_key=api_key, defaults=defaults))
        return OperationRef.start(lambda: cls._attach(transport, transport.json("GET", sandbox_path(sandbox_id))), "paddock-get")

    @classmethod
    def list(
        cls,
        *,
        tags: Optional[Sequence[str]] = None,
        status: Union[SandboxStatus, str, None] = None,
        runner_ids: Optional[Sequence[str]] = None,
        show_terminated: Optional[bool] = None,
        base_url: Optional[str] = None,
        api_key: Optional[str] = None,
        defaults: Optional[SandboxDefaults] = None,
    ) -> OperationRef[List[Sandbox]]:
        """Sandboxes with all ``tags``, in ``status``, on any of ``runner_ids``. Ended ones are
        included with ``show_terminated=True`` (implied when ``status`` is an ended state)."""
        transport = _transport_for(resolve_config(base_url=base_url, api_key=api_key, defaults=defaults))
        wanted = SandboxStatus(status.lower()) if isinstance(status, str) else status
        include_ended = show_terminated if show_terminated is not None else bool(wanted and wanted.is_terminal)

        def fetch() -> List[Sandbox]:
            out: List[Sandbox] = []
            token: Optional[str] = None
            while True:
                page = transport.json(
                    "GET",
                    "/v1/sandboxes",
                    query={
                        "pageSize": 100,
                        "pageToken": token,
                        "tags": list(tags) if tags else None,
                        "state": wanted.to_state() if wanted else None,
                        "runnerIds": list(runner_ids) if runner_ids else None,
                        "showTerminated": include_ended,
                    },
                )
                out.extend(cls._attach(transport, v) for v in page.get("sandboxes", []))
                token = page.get("nextPageToken") or None
                if token is None:
                    return out

        return OperationRef.start(fetch, "paddock-list")

    @classmethod
    def delete(
        cls,
        sandbox_id: str,
        *,
        missing_ok: bool = False,
        base_url: Optional[str] = None,
        api_key: Optional[str] = None,
        defaults: Optional[SandboxDefaults] = None,
    ) -> OperationRef[None]:
        """Deletes (stops at once) a sandbox by id; ``missing_ok`` makes a missing one a success."""
        transport = _transport_for(resolve_config(base_url=base_url, api_key=api_key, defaults=defaults))

        def run() -> None:
            transport.json("DELETE", sandbox_path(sandbox_id), query={"gracePeriodSeconds": 0, "allowMissing": missing_ok})

        return OperationRef.start(run, "paddock-delete")

    # -- state --------------------------------------------------------------------------------

    def _status_field(self, name: str) -> Any:
        return self._view["status"].get(name) if self._view and isinstance(self._view.get("status"), dict) else None

    def _status_text(self, name: str) -> Optional[str]:
        v = self._status_field(name)
        return str(v) if v else None

    @property
    def sandbox_id(self) -> Optional[str]:
        """The sandbox's id, or ``None`` before it was created."""
        return str(self._view["sandboxId"]) if self._view else None

    @property
    def status(self) -> Optional[SandboxStatus]:
        """The last known state (``get_status()`` asks the platform)."""
        return SandboxStatus.from_state(self._status_field("state")) if self._view else None

    @property
    def state_reason(self) -> Optional[str]:
        """Why the sandbox is in its state (``EXITED``, ``STOPPED_BY_USER``, ``FAILED_TO_START``...)."""
        return self._status_text("stateReason")

    @property
    def returncode(self) -> Optional[int]:
        """The main command's exit code once the sandbox ended, if one was observed."""
        code = self._status_field("exitCode")
        status = self.status
        return code if isinstance(code, int) and status is not None and status.is_terminal else None

    @property
    def runner_id(self) -> Optional[str]:
        return self._status_text("runnerId")

    @property
    def runner_group_id(self) -> Optional[str]:
        return self._status_text("runnerGroupId")

    @property
    def started_at(self) -> Optional[datetime]:
        return _parse_time(self._status_field("startTime"))

    @property
    def created_at(self) -> Optional[datetime]:
        return _parse_time(self._status_field("createTime"))

    @property
    def status_updated_at(self) -> Optional[datetime]:
        """When this handle last heard the sandbox's state from the platform."""
        return self._status_updated_at

    @property
    def service_urls(self) -> Dict[str, str]:
        """URL of each service the platform published for this sandbox (empty when none)."""
        services = self._status_field("services")
        out: Dict[str, str] = {}
        for s in services if isinstance(services, list) else []:
            if isinstance(s, dict) and isinstance(s.get("url"), str):
                out[str(s.get("name", len(out)))] = s["url"]
        return out

    def _effective_requirements(self, kind: str) -> Optional[Dict[str, str]]:
        reqs = self._status_field("effectiveResourceRequirements")
        if not isinstance(reqs, list) or not reqs or not isinstance(reqs[0], dict):
            return None
        values = reqs[0].get(kind)
        return {str(k): str(v) for k, v in values.items()} if isinstance(values, dict) else None

    @property
    def resource_requests(self) -> Optional[Dict[str, str]]:
        """What the policy resolved for the main container's requests (``cpu``, ``memory``, ``gpuCount``)."""
        return self._effective_requirements("requests")

    @property
    def resource_limits(self) -> Optional[Dict[str, str]]:
        return self._effective_requirements("limits")

    @property
    def effective_max_lifetime_seconds(self) -> Optional[int]:
        v = self._status_field("effectiveMaxLifetimeSeconds")
        return v if isinstance(v, int) else None

    @property
    def spec(self) -> Dict[str, Any]:
        """The spec as the platform accepted it (or, before creation, as it will be sent)."""
        if self._view and isinstance(self._view.get("spec"), dict):
            return dict(self._view["spec"])
        return dict(self._spec or {})

    def get_status(self) -> SandboxStatus:
        """Asks the platform for the sandbox's state now."""
        if self._start_ref is None:
            raise SandboxNotRunningError("the sandbox has not been started")
        self._apply(self._transport.json("GET", sandbox_path(self._started_id())))
        status = self.status
        assert status is not None
        return status

    # -- waiting ------------------------------------------------------------------------------

    def _wait_until(self, until: str, done: Callable[[SandboxStatus], bool], timeout: Optional[float]) -> None:
        """Long polls ``:wait`` until ``done`` holds (the gateway answers as soon as the state moves)."""
        sandbox_id = self._started_id()
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            status = self.status
            assert status is not None
            if done(status):
                return
            remaining = _LONG_POLL_SECONDS if deadline is None else deadline - time.monotonic()
            if remaining <= 0:
                raise SandboxTimeoutError(f"sandbox {sandbox_id} was not {until} within {timeout:g} s (it is {status.value})", code="deadline_exceeded")
            seconds = min(_LONG_POLL_SECONDS, remaining)
            view = self._transport.json(
                "GET",
                sandbox_path(sandbox_id, ":wait"),
                query={"timeoutSeconds": f"{seconds:.3f}", "until": until},
                timeout=seconds + self._config.request_timeout_seconds,
            )
            self._apply(view)

    def _failed(self) -> SandboxFailedError:
        reason = self.state_reason
        detail = self._status_field("message")
        return SandboxFailedError(
            f"sandbox {self.sandbox_id} failed ({reason or 'no reason given'}){': ' + str(detail) if detail else ''}",
            sandbox_id=str(self.sandbox_id),
            state_reason=reason,
            code="failed_precondition",
        )

    def wait(self, timeout: Optional[float] = None) -> Sandbox:
        """Blocks until the sandbox runs (or has already ended) and returns it. Raises
        ``SandboxFailedError`` if it failed, ``SandboxTimeoutError`` after ``timeout`` seconds
        (default: the request timeout, 300 s)."""
        self._wait_until("started", lambda s: s in _STARTED, timeout if timeout is not None else self._config.request_timeout_seconds)
        if self.status is SandboxStatus.FAILED:
            raise self._failed()
        return self

    def wait_until_complete(self, timeout: Optional[float] = None, raise_on_termination: bool = True) -> OperationRef[Optional[int]]:
        """Waits until the sandbox has ended; the result is its main command's exit code.

        A sandbox stopped by a user or by its lifetime raises ``SandboxTerminatedError`` unless
        ``raise_on_termination=False`` (then the result is the exit code, if any); any other
        failure raises ``SandboxFailedError``. ``timeout=None`` waits as long as it takes.
        """

        def run() -> Optional[int]:
            self._wait_until("ended", lambda s: s.is_terminal, timeout)
            reason = self.state_reason or ("EXITED" if self.status is SandboxStatus.COMPLETED else None)
            if reason == "EXITED":
                return self.returncode
            if reason in _TERMINATION_REASONS:
                if raise_on_termination:
                    raise SandboxTerminatedError(
                        f"sandbox {self.sandbox_id} was terminated before its command completed ({reason})",
                        code="failed_precondition",
                        reason="CWSANDBOX_SANDBOX_TERMINATED",
                        metadata={"stateReason": str(reason)},
                    )
                return self.returncode
            raise self._failed()

        return OperationRef.start(run, "paddock-wait")

    def _await_running(self) -> str:
        """Waits for RUNNING before an operation that needs it (exec, files)."""
        if self.status is not SandboxStatus.RUNNING:
            self.wait()
        status = self.status
        if status in (SandboxStatus.RUNNING, SandboxStatus.PAUSED):
            return self._started_id()
        raise SandboxTerminatedError(
            f"sandbox {self.sandbox_id} is {status.value if status else 'unknown'} ({self.state_reason or 'no reason'}): it no longer runs commands or serves files",
            code="failed_precondition",
            reason="CWSANDBOX_SANDBOX_TERMINATED",
        )

    def _transport_for_exec(self) -> Transport:
        return self._transport

    # -- stopping -----------------------------------------------------------------------------

    def stop(self, graceful_shutdown_seconds: float = DEFAULT_GRACEFUL_SHUTDOWN_SECONDS, missing_ok: bool = False) -> OperationRef[None]:
        """Stops the sandbox: its main process gets SIGTERM, and SIGKILL after
        ``graceful_shutdown_seconds``. Completes once the platform confirms it ended. A second
        call while one is under way (or after it succeeded) returns the same operation."""
        if graceful_shutdown_seconds < 0:
            raise ValueError("graceful_shutdown_seconds must be >= 0")
        with self._lock:
            current = self._stop_ref
            if current is not None and not (current.done() and current.exception() is not None):
                return current
            if self._start_ref is None:
                return OperationRef.completed(None)  # never created: nothing to stop
            self._stop_ref = OperationRef.start(lambda: self._stop(graceful_shutdown_seconds, missing_ok, _STOP_CONFIRM_SECONDS), "paddock-stop")
            return self._stop_ref

    def _stop(self, grace: float, missing_ok: bool, confirm_seconds: float) -> None:
        try:
            sandbox_id = self._started_id()
        except CWSandboxError:
            return  # the create failed: there is nothing to stop
        try:
            answer = self._transport.json(
                "DELETE", sandbox_path(sandbox_id), query={"gracePeriodSeconds": int(grace + 0.999), "allowMissing": missing_ok}
            )
        except SandboxNotFoundError:
            if missing_ok:
                _owned.discard(self)
                return
            raise
        if isinstance(answer, dict) and isinstance(answer.get("sandbox"), dict):
            self._apply(answer["sandbox"])
        elif missing_ok:
            _owned.discard(self)
            return
        self._wait_until("ended", lambda s: s.is_terminal, grace + confirm_seconds)
        _owned.discard(self)

    def __enter__(self) -> Sandbox:
        self.start().result()
        return self

    def __exit__(self, exc_type: Optional[Type[BaseException]], exc: Optional[BaseException], tb: Optional[TracebackType]) -> None:
        try:
            self.stop(missing_ok=True).result()
        except CWSandboxError:
            if exc is None:
                raise  # otherwise the body's own error is the one to see

    async def __aenter__(self) -> Sandbox:
        await self.start()
        return self

    async def __aexit__(self, exc_type: Optional[Type[BaseException]], exc: Optional[BaseException], tb: Optional[TracebackType]) -> None:
        try:
            await self.stop(missing_ok=True)
        except CWSandboxError:
            if exc is None:
                raise

    # -- commands -----------------------------------------------------------------------------

    def exec(
        self,
        command: Sequence[str],
        *,
        cwd: Optional[str] = None,
        check: bool = False,
        timeout_seconds: Optional[float] = None,
        stdin: bool = False,
        env: Optional[Mapping[str, str]] = None,
    ) -> Process:
        """Runs ``command`` (an argv list) in the sandbox and returns its ``Process`` at once.

        The sandbox is waited for first if it is still starting (``timeout_seconds`` counts
        only the command). ``check=True`` makes a non-zero exit raise ``SandboxExecutionError``;
        a command running past ``timeout_seconds`` is killed and raises
        ``SandboxCommandTimeoutError``; ``stdin=True`` keeps stdin open for ``process.stdin``.
        """
        if isinstance(command, str):
            raise TypeError("command must be a list of strings (argv), e.g. ['sh', '-c', '...']")
        if not command:
            raise ValueError("Command cannot be empty")
        if cwd is not None and not cwd.startswith("/"):
            raise ValueError(f"cwd must be an absolute path, got {cwd!r}")
        if timeout_seconds is not None and timeout_seconds <= 0:
            raise ValueError("timeout_seconds must be positive")
        return Process(self, [str(c) for c in command], check=check, stdin=stdin, cwd=cwd, env=env, timeout_seconds=timeout_seconds)

    def shell(self, command: Optional[Sequence[str]] = None, *, width: int = 80, height: int = 24, cwd: Optional[str] = None) -> TerminalSession:
        """Runs an interactive command (a shell by default) on a pseudo-terminal of ``width``
        columns and ``height`` rows; ``resize()`` changes it."""
        if width <= 0 or height <= 0:
            raise ValueError("width and height must be positive")
        argv = list(command) if command else ["/bin/sh"]
        return TerminalSession(self, argv, cwd=cwd, env=None, timeout_seconds=None, width=width, height=height)

    # -- files --------------------------------------------------------------------------------

    def read_file(self, path: str) -> OperationRef[bytes]:
        """The file's bytes, exactly."""
        return OperationRef.start(lambda: self._transport.request("GET", sandbox_path(self._await_running(), "/files"), query={"path": path}), "paddock-read")

    def write_file(self, path: str, content: bytes) -> OperationRef[None]:
        """Writes ``content`` (bytes, exactly; empty makes an empty file), replacing the file."""
        if not isinstance(content, (bytes, bytearray, memoryview)):
            raise TypeError(f"content must be bytes, not {type(content).__name__} (encode text first)")
        data = bytes(content)

        def run() -> None:
            sandbox_id = self._await_running()
            if len(data) > INLINE_FILE_LIMIT:
                self._transport.request("PUT", sandbox_path(sandbox_id, "/files"), query={"path": path}, raw=data)
            else:
                body = {"path": path, "content": base64.b64encode(data).decode("ascii")}
                self._transport.request("POST", sandbox_path(sandbox_id, ":writeFile"), json_body=body)

        return OperationRef.start(run, "paddock-write")

    def read_file_streaming(self, path: str, chunk_size: int = 64 * 1024) -> StreamReader[bytes]:
        """The file's bytes in chunks as they arrive (any size, never all in memory)."""
        reader: StreamReader[bytes] = StreamReader()

        def pump() -> None:
            try:
                with self._transport.exchange("GET", sandbox_path(self._await_running(), "/files"), query={"path": path}) as answer:
                    reader._on_abandon = answer.abort
                    while not reader.abandoned:
                        chunk = answer.response.read(chunk_size)
                        if not chunk:
                            break
                        reader._put(chunk)
                reader._close(None)
            except BaseException as e:  # noqa: BLE001 - the consumer must hear of it
                reader._close(e if not reader.abandoned else None)

        threading.Thread(target=pump, name="paddock-read-stream", daemon=True).start()
        return reader

    def write_file_streaming(self, path: str, content: Union[bytes, Iterable[bytes]]) -> OperationRef[None]:
        """Writes the file from ``content``: bytes, or an iterable of bytes chunks sent as they
        come (chunked upload, never all in memory on this side)."""
        replayable = isinstance(content, (bytes, bytearray, memoryview))

        def chunks(source: Iterable[Any]) -> Iterable[bytes]:
            for chunk in source:
                if not isinstance(chunk, (bytes, bytearray, memoryview)):
                    raise TypeError(f"write_file_streaming takes bytes chunks, not {type(chunk).__name__}")
                if chunk:
                    yield bytes(chunk)

        def run() -> None:
            sandbox_id = self._await_running()
            payload: Union[bytes, Iterable[bytes]] = bytes(content) if isinstance(content, (bytes, bytearray, memoryview)) else chunks(content)
            with self._transport.exchange(
                "PUT", sandbox_path(sandbox_id, "/files"), query={"path": path}, body=payload, headers={"Content-Type": "application/octet-stream"}, retry=replayable
            ) as answer:
                answer.response.read()

        return OperationRef.start(run, "paddock-write-stream")

    # -- logs ---------------------------------------------------------------------------------

    def stream_logs(
        self,
        *,
        follow: bool = False,
        tail_lines: Optional[int] = None,
        since_time: Union[datetime, str, None] = None,
        timestamps: bool = False,
        timeout_seconds: Optional[float] = None,
    ) -> StreamReader[str]:
        """The main process's output (stdout and stderr, in order) as lines. ``follow`` keeps
        reading until the sandbox ends (a dropped connection resumes where it stopped);
        ``tail_lines`` starts that many lines before the end; ``since_time`` (timezone-aware)
        skips older output; ``timestamps`` prefixes each line with its time."""
        query = LogQuery(follow=follow, tail_lines=tail_lines, since_time=since_time, timestamps=timestamps, timeout_seconds=timeout_seconds)
        return open_log_stream(self._transport, self._started_id(), query)

    # -- pause, resume, snapshots ---------------------------------------------------------------

    def pause(self) -> OperationRef[None]:
        """Freezes the sandbox (``paused``): its processes keep their memory and its lifetime
        stops. Any exec, file or log call (or ``resume()``) resumes it. Idempotent."""
        return OperationRef.start(lambda: self._apply(self._transport.json("POST", sandbox_path(self._started_id(), ":pause"), json_body={})), "paddock-pause")

    def resume(self) -> OperationRef[None]:
        """Resumes a paused sandbox where it stopped. Idempotent."""
        return OperationRef.start(lambda: self._apply(self._transport.json("POST", sandbox_path(self._started_id(), ":resume"), json_body={})), "paddock-resume")

    def snapshot(self, volume: str = "workspace", request_id: Optional[str] = None, timeout: float = 600.0) -> OperationRef[Dict[str, Any]]:
        """Snapshots the sandbox's disk (the ``workspace`` volume) and completes with the snapshot
        (a ``FileSystemSnapshot`` dict) once it is READY; a FAILED one raises with its reason.
        Restore it into a new sandbox with ``volumes=[{"name": "workspace", "scratch":
        {"restoreFromSnapshotId": id}}]``."""
        token = request_id or str(uuid.uuid4())

        def run() -> Dict[str, Any]:
            made = self._transport.json("POST", sandbox_path(self._started_id(), ":snapshot"), json_body={"requestId": token, "scratchVolumeName": volume})
            return wait_for_snapshot(self._transport, str(made["fileSystemSnapshotId"]), timeout)

        return OperationRef.start(run, "paddock-snapshot")

    def stop_with_snapshot(self, volumes: Sequence[str] = ("workspace",), graceful_shutdown_seconds: float = 0.0) -> OperationRef[List[str]]:
        """Stops the sandbox with its volumes snapshotted first (``stop(snapshot_on_stop=True)``
        of the product's client); completes with one snapshot id per volume, in order, once the
        sandbox has ended. ``file_system_snapshot_id`` then holds the first."""

        def run() -> List[str]:
            sandbox_id = self._started_id()
            query: Dict[str, Any] = {"gracePeriodSeconds": int(graceful_shutdown_seconds + 0.999), "snapshotVolumes": list(volumes), "requestId": str(uuid.uuid4())}
            answer = self._transport.json("DELETE", sandbox_path(sandbox_id), query=query)
            ids = [str(i) for i in (answer.get("fileSystemSnapshotIds") or [])] if isinstance(answer, dict) else []
            if ids:
                self.file_system_snapshot_id = ids[0]
            if isinstance(answer, dict) and isinstance(answer.get("sandbox"), dict):
                self._apply(answer["sandbox"])
            self._wait_until("ended", lambda s: s.is_terminal, graceful_shutdown_seconds + _STOP_CONFIRM_SECONDS)
            _owned.discard(self)
            return ids

        return OperationRef.start(run, "paddock-stop-snapshot")

    def __repr__(self) -> str:
        status = self.status.value if self.status else "not started"
        return f"<Sandbox {self.sandbox_id or '(unsaved)'} {status}>"


def wait_for_snapshot(transport: Transport, snapshot_id: str, timeout: float) -> Dict[str, Any]:
    """Polls a file-system snapshot until READY (returned) or FAILED (raised, with its reason)."""
    deadline = time.monotonic() + timeout
    interval = 0.05
    while True:
        snap = transport.json("GET", f"/v1/fileSystemSnapshots/{snapshot_id}")
        state = snap.get("state")
        if state == "SNAPSHOT_STATE_READY":
            return dict(snap)
        if state != "SNAPSHOT_STATE_CREATING":
            raise SandboxError(f"snapshot {snapshot_id} is {state}: {snap.get('stateReason') or 'no reason'}")
        if time.monotonic() > deadline:
            raise SandboxTimeoutError(f"snapshot {snapshot_id} was not READY within {timeout} s")
        time.sleep(interval)
        interval = min(1.0, interval * 1.5)


def _stop_owned_at_exit() -> None:
    """Stops what this process created and left running, so a script's end leaves no orphans."""
    for sb in list(_owned):
        try:
            sb._stop(0, True, 5.0)
        except Exception:  # noqa: BLE001 - best effort at exit
            pass


atexit.register(_stop_owned_at_exit)

from ._session import Session  # noqa: E402  (Session builds Sandboxes; imported last for the cycle)
