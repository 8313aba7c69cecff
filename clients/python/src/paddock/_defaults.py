"""Client defaults, session defaults and how connection settings are resolved."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional, Tuple

#: Where the gateway listens when ``pnpm start`` runs the platform on this machine.
DEFAULT_GATEWAY_URL = "http://127.0.0.1:8081"
GATEWAY_URL_ENV = "PADDOCK_GATEWAY_URL"
API_KEY_ENV = "PADDOCK_API_KEY"

#: The main process when none is given: it idles, and exits 0 as soon as it is asked to stop.
DEFAULT_COMMAND = "/bin/sh"
DEFAULT_ARGS: Tuple[str, ...] = ("-c", 'trap "exit 0" TERM INT; sleep infinity & wait')

DEFAULT_REQUEST_TIMEOUT_SECONDS = 300.0
DEFAULT_GRACEFUL_SHUTDOWN_SECONDS = 10.0
#: A stream (exec, shell) silent this long gets a ping; silent twice as long, it is declared lost.
DEFAULT_STREAM_KEEPALIVE_SECONDS = 20.0
DEFAULT_MAX_RETRIES = 5


@dataclass(frozen=True)
class SandboxDefaults:
    """Defaults shared by the sandboxes of a ``Session`` (or passed to ``Sandbox.run``).

    Values given to a single sandbox win; ``tags`` are merged (defaults first), and
    ``environment_variables`` and ``annotations`` are merged key by key.
    ``container_image=None`` means the runner's default image.
    """

    container_image: Optional[str] = None
    command: Optional[str] = DEFAULT_COMMAND
    args: Optional[Tuple[str, ...]] = DEFAULT_ARGS
    base_url: Optional[str] = None
    api_key: Optional[str] = None
    request_timeout_seconds: float = DEFAULT_REQUEST_TIMEOUT_SECONDS
    max_lifetime_seconds: Optional[float] = None
    tags: Tuple[str, ...] = ()
    runner_ids: Optional[Tuple[str, ...]] = None
    placement_mode: Optional[str] = None
    resources: Any = None
    network: Any = None
    environment_variables: Mapping[str, str] = field(default_factory=dict)
    annotations: Mapping[str, str] = field(default_factory=dict)
    temp_dir: str = "/tmp"
    stream_keepalive_seconds: float = DEFAULT_STREAM_KEEPALIVE_SECONDS
    max_retries: int = DEFAULT_MAX_RETRIES


@dataclass(frozen=True)
class ClientConfig:
    """How to reach the gateway; one connection pool is kept per distinct configuration."""

    base_url: str
    api_key: Optional[str]
    request_timeout_seconds: float = DEFAULT_REQUEST_TIMEOUT_SECONDS
    max_retries: int = DEFAULT_MAX_RETRIES
    initial_backoff_seconds: float = 0.1
    max_backoff_seconds: float = 2.0
    stream_keepalive_seconds: float = DEFAULT_STREAM_KEEPALIVE_SECONDS


def resolve_config(
    *,
    base_url: Optional[str] = None,
    api_key: Optional[str] = None,
    request_timeout_seconds: Optional[float] = None,
    defaults: Optional[SandboxDefaults] = None,
) -> ClientConfig:
    """Arguments win over ``defaults``, which win over the environment, which wins over the built-ins."""
    d = defaults or SandboxDefaults()
    url = base_url or d.base_url or os.environ.get(GATEWAY_URL_ENV) or DEFAULT_GATEWAY_URL
    if not url.startswith(("http://", "https://")):
        raise ValueError(f"base_url must start with http:// or https://, got {url!r}")
    return ClientConfig(
        base_url=url.rstrip("/"),
        api_key=api_key or d.api_key or os.environ.get(API_KEY_ENV) or None,
        request_timeout_seconds=request_timeout_seconds if request_timeout_seconds is not None else d.request_timeout_seconds,
        max_retries=d.max_retries,
        stream_keepalive_seconds=d.stream_keepalive_seconds,
    )
