"""Value types: sandbox states, command results, resource and network options."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Tuple


class SandboxStatus(str, enum.Enum):
    """A sandbox's lifecycle state: the platform's ``STATE_*`` value without its prefix."""

    PENDING = "pending"
    CREATING = "creating"
    RUNNING = "running"
    PAUSED = "paused"
    TERMINATING = "terminating"
    COMPLETED = "completed"
    FAILED = "failed"
    TERMINATED = "terminated"
    UNSPECIFIED = "unspecified"

    @classmethod
    def from_state(cls, state: Optional[str]) -> SandboxStatus:
        """``STATE_RUNNING`` → ``RUNNING``; an unknown or missing state is ``UNSPECIFIED``."""
        name = (state or "").upper()
        name = name[len("STATE_"):] if name.startswith("STATE_") else name
        try:
            return cls(name.lower())
        except ValueError:
            return cls.UNSPECIFIED

    @property
    def is_terminal(self) -> bool:
        return self in (SandboxStatus.COMPLETED, SandboxStatus.FAILED, SandboxStatus.TERMINATED)

    def to_state(self) -> str:
        """The platform's spelling (``STATE_RUNNING``)."""
        return f"STATE_{self.value.upper()}"


class PlacementMode(str, enum.Enum):
    """Where a sandbox may run: the organization's own runners (``CKS``) or shared capacity."""

    UNSPECIFIED = "unspecified"
    SERVERLESS = "serverless"
    CKS = "cks"

    def to_mode(self) -> str:
        return f"SANDBOX_MODE_{self.value.upper()}"


@dataclass(frozen=True)
class ProcessResult:
    """The outcome of a command: its output (decoded as UTF-8, and the raw bytes) and exit code."""

    stdout: str
    stderr: str
    returncode: int
    stdout_bytes: bytes = b""
    stderr_bytes: bytes = b""
    command: Tuple[str, ...] = ()
    #: The signal that ended the command, when one did (``SIGKILL`` after a cancel).
    signal: Optional[str] = None


@dataclass(frozen=True)
class TerminalResult:
    """The outcome of an interactive (TTY) session: its exit code and everything it printed."""

    returncode: int
    output: bytes = b""
    command: Tuple[str, ...] = ()
    signal: Optional[str] = None


_RESOURCE_KEYS = ("cpu", "memory", "gpu")


def _resources_wire(name: str, values: Mapping[str, Any]) -> Dict[str, Any]:
    unknown = sorted(set(values) - set(_RESOURCE_KEYS))
    if unknown:
        raise ValueError(f"{name} has unknown key(s) {', '.join(unknown)}: expected cpu, memory, gpu")
    out: Dict[str, Any] = {}
    for key in ("cpu", "memory"):
        if values.get(key) is not None:
            out[key] = str(values[key])
    gpu = values.get("gpu")
    if gpu is not None:
        out["gpu"] = _gpu_wire(f"{name}.gpu", gpu)
    return out


def _gpu_wire(name: str, gpu: Any) -> Dict[str, Any]:
    if isinstance(gpu, int):
        return {"count": str(gpu)}
    if not isinstance(gpu, Mapping):
        raise ValueError(f"{name} must be a count or a mapping with count and type or memory_gb")
    unknown = sorted(set(gpu) - {"count", "type", "memory_gb"})
    if unknown:
        raise ValueError(f"{name} has unknown key(s) {', '.join(unknown)}: expected count, type, memory_gb")
    out: Dict[str, Any] = {}
    if gpu.get("count") is not None:
        out["count"] = str(int(gpu["count"]))
    if gpu.get("type") is not None:
        out["type"] = str(gpu["type"])
    if gpu.get("memory_gb") is not None:
        out["memoryGb"] = str(int(gpu["memory_gb"]))
    return out


@dataclass(frozen=True)
class ResourceOptions:
    """Separate requests and limits (Burstable when limits exceed requests), plus GPUs.

    ``requests``/``limits`` take ``cpu`` (``"500m"``, ``"2"``) and ``memory`` (``"512Mi"``);
    ``gpu`` takes ``count`` and ``type`` or ``memory_gb``. A flat ``{"cpu", "memory", "gpu"}``
    mapping passed as ``resources=`` instead means requests = limits (Guaranteed).
    """

    requests: Mapping[str, Any] = field(default_factory=dict)
    limits: Mapping[str, Any] = field(default_factory=dict)
    gpu: Optional[Mapping[str, Any]] = None

    def to_container_fields(self) -> Dict[str, Any]:
        requests = _resources_wire("resources.requests", self.requests)
        limits = _resources_wire("resources.limits", self.limits)
        if self.gpu is not None:
            requests["gpu"] = _gpu_wire("resources.gpu", self.gpu)
        wire: Dict[str, Any] = {}
        if requests:
            wire["requests"] = requests
        if limits:
            wire["limits"] = limits
        return {"resourceRequirements": wire} if wire else {}


def resources_to_container_fields(resources: Any) -> Dict[str, Any]:
    """The container fields for ``resources=`` (a ``ResourceOptions`` or a flat mapping)."""
    if resources is None:
        return {}
    if isinstance(resources, ResourceOptions):
        return resources.to_container_fields()
    if isinstance(resources, Mapping):
        if "requests" in resources or "limits" in resources:
            return ResourceOptions(
                requests=resources.get("requests") or {}, limits=resources.get("limits") or {}, gpu=resources.get("gpu")
            ).to_container_fields()
        wire = _resources_wire("resources", resources)
        return {"resources": wire} if wire else {}
    raise TypeError(f"resources must be a ResourceOptions or a mapping, not {type(resources).__name__}")


def _camel(key: str) -> str:
    head, *rest = key.split("_")
    return head + "".join(p[:1].upper() + p[1:] for p in rest)


def camelize(value: Any) -> Any:
    """snake_case keys to the platform's camelCase, recursively (lists and nested mappings)."""
    if isinstance(value, Mapping):
        return {_camel(str(k)): camelize(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [camelize(v) for v in value]
    return value


@dataclass(frozen=True)
class NetworkOptions:
    """Network intent of a sandbox. Rules are allow rules over default-deny; the policy may narrow.

    ``egress``/``ingress`` entries are mappings in the platform's rule shape (for example
    ``{"cidr": "10.0.0.0/8", "ports": [443]}``); snake_case keys are converted.
    """

    deny_egress: Optional[bool] = None
    deny_ingress: Optional[bool] = None
    egress: Optional[List[Mapping[str, Any]]] = None
    ingress: Optional[List[Mapping[str, Any]]] = None

    def to_wire(self) -> Dict[str, Any]:
        out: Dict[str, Any] = {}
        if self.deny_egress is not None:
            out["denyEgress"] = self.deny_egress
        if self.deny_ingress is not None:
            out["denyIngress"] = self.deny_ingress
        if self.egress is not None:
            out["egress"] = camelize(self.egress)
        if self.ingress is not None:
            out["ingress"] = camelize(self.ingress)
        return out
