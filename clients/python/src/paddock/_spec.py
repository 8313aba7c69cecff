"""From ``Sandbox.run`` arguments (and session defaults) to the gateway's ``SandboxSpec`` JSON.

Every option becomes a spec field the platform honours or refuses by name; none is dropped.
"""

from __future__ import annotations

import base64
import math
from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional, Sequence

from ._defaults import SandboxDefaults
from ._types import NetworkOptions, PlacementMode, camelize, resources_to_container_fields


@dataclass(frozen=True)
class SandboxOptions:
    """What one sandbox asks for; ``None`` means "take the session default"."""

    command: Optional[str] = None
    args: Optional[Sequence[str]] = None
    container_image: Optional[str] = None
    tags: Optional[Sequence[str]] = None
    runner_ids: Optional[Sequence[str]] = None
    max_lifetime_seconds: Optional[float] = None
    resources: Any = None
    mounted_files: Optional[Sequence[Mapping[str, Any]]] = None
    network: Any = None
    environment_variables: Optional[Mapping[str, str]] = None
    annotations: Optional[Mapping[str, str]] = None
    placement_mode: Optional[str] = None
    services: Optional[Sequence[Mapping[str, Any]]] = None
    #: Start from a file-system snapshot: its id, or ``{"file_system_snapshot_id": id, "name": "workspace"}``.
    file_system_snapshot: Any = None


def _mounted_file(entry: Mapping[str, Any], index: int) -> Dict[str, str]:
    path = entry.get("mount_path", entry.get("path"))
    content = entry.get("file_content", entry.get("content", b""))
    if not isinstance(path, str) or not path.startswith("/"):
        raise ValueError(f"mounted_files[{index}].mount_path must be an absolute path")
    if isinstance(content, str):
        content = content.encode("utf-8")
    if not isinstance(content, (bytes, bytearray)):
        raise TypeError(f"mounted_files[{index}].file_content must be bytes or str")
    return {"path": path, "content": base64.b64encode(bytes(content)).decode("ascii")}


def _network(value: Any) -> Dict[str, Any]:
    if isinstance(value, NetworkOptions):
        return value.to_wire()
    if isinstance(value, Mapping):
        wire: Dict[str, Any] = camelize(value)
        return wire
    raise TypeError(f"network must be a NetworkOptions or a mapping, not {type(value).__name__}")


def _mode(value: Any) -> str:
    try:
        return PlacementMode(str(getattr(value, "value", value)).lower()).to_mode()
    except ValueError:
        raise ValueError(f"placement_mode must be one of unspecified, serverless, cks; got {value!r}") from None


def _restore_volume(value: Any) -> Dict[str, Any]:
    snapshot_id = value if isinstance(value, str) else value.get("file_system_snapshot_id") if isinstance(value, Mapping) else None
    name = value.get("name", "workspace") if isinstance(value, Mapping) else "workspace"
    if not isinstance(snapshot_id, str) or not snapshot_id:
        raise ValueError("file_system_snapshot must be a snapshot id, or a mapping with file_system_snapshot_id")
    return {"name": str(name), "scratch": {"restoreFromSnapshotId": snapshot_id}}


def _merged_tags(defaults: SandboxDefaults, tags: Optional[Sequence[str]]) -> List[str]:
    out: List[str] = []
    for t in [*defaults.tags, *(tags or [])]:
        if not isinstance(t, str):
            raise TypeError(f"tags must be strings, got {t!r}")
        if t not in out:
            out.append(t)
    return out


def build_spec(options: SandboxOptions, defaults: SandboxDefaults) -> Dict[str, Any]:
    """The ``SandboxSpec`` for one sandbox: its own values over the defaults."""
    container: Dict[str, Any] = {}
    image = options.container_image or defaults.container_image
    if image:
        container["image"] = image
    command: Optional[str] = options.command if options.command is not None else defaults.command
    args = list((options.args if options.command is not None else defaults.args) or [])
    if command:
        container["command"] = [command]
        if args:
            container["args"] = args
    env = {**defaults.environment_variables, **(options.environment_variables or {})}
    if env:
        container["environmentVariables"] = {str(k): str(v) for k, v in env.items()}
    container.update(resources_to_container_fields(options.resources if options.resources is not None else defaults.resources))
    if options.mounted_files:
        container["files"] = [_mounted_file(f, i) for i, f in enumerate(options.mounted_files)]

    spec: Dict[str, Any] = {"containers": [container]}
    tags = _merged_tags(defaults, options.tags)
    if tags:
        spec["tags"] = tags
    lifetime = options.max_lifetime_seconds if options.max_lifetime_seconds is not None else defaults.max_lifetime_seconds
    if lifetime is not None:
        if lifetime <= 0:
            raise ValueError("max_lifetime_seconds must be positive")
        spec["maxLifetimeSeconds"] = int(math.ceil(lifetime))
    network = options.network if options.network is not None else defaults.network
    if network is not None:
        spec["network"] = _network(network)
    annotations = {**defaults.annotations, **(options.annotations or {})}
    if annotations:
        spec["annotations"] = {str(k): str(v) for k, v in annotations.items()}
    if options.services:
        spec["services"] = [camelize(s) for s in options.services]
    if options.file_system_snapshot is not None:
        spec["volumes"] = [_restore_volume(options.file_system_snapshot)]
    runner_ids = options.runner_ids if options.runner_ids is not None else defaults.runner_ids
    mode = options.placement_mode or defaults.placement_mode
    if runner_ids:
        spec["runnerIds"] = list(runner_ids)
        if mode is not None and PlacementMode(str(mode).lower()) is PlacementMode.SERVERLESS:
            raise ValueError("runner_ids pins the organization's own runners: it cannot be combined with placement_mode='serverless'")
        # Runner ids only name the organization's own runners (the CKS placement mode).
        spec["mode"] = PlacementMode.CKS.to_mode()
    elif mode is not None:
        spec["mode"] = _mode(mode)
    return spec
