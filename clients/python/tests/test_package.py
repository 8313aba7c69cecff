"""The package itself: standard library only, typed, the error tree, and configuration."""

from __future__ import annotations

import ast
import importlib.util
import os
import sys
import sysconfig
import unittest
from pathlib import Path
from unittest import mock

import paddock
from paddock import exceptions
from paddock._defaults import DEFAULT_GATEWAY_URL, resolve_config

PACKAGE = Path(paddock.__file__).parent


def _is_stdlib(name: str) -> bool:
    if name in sys.builtin_module_names:
        return True
    spec = importlib.util.find_spec(name)
    if spec is None or spec.origin is None:
        return False
    stdlib = os.path.realpath(sysconfig.get_paths()["stdlib"])
    return spec.origin in ("built-in", "frozen") or os.path.realpath(spec.origin).startswith(stdlib + os.sep) and "site-packages" not in spec.origin


class Package(unittest.TestCase):
    def test_only_the_standard_library_is_imported(self) -> None:
        outside = []
        for path in PACKAGE.glob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module] if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module else []
                outside += [f"{path.name}: {n}" for n in names if not _is_stdlib(n.split(".")[0])]
        self.assertEqual(outside, [])

    def test_it_ships_its_types(self) -> None:
        self.assertTrue((PACKAGE / "py.typed").is_file())

    def test_the_error_tree(self) -> None:
        tree = {
            exceptions.CWSandboxAuthenticationError: exceptions.CWSandboxError,
            exceptions.SandboxValidationError: exceptions.CWSandboxValidationError,
            exceptions.SandboxUnavailableError: exceptions.SandboxNotRunningError,
            exceptions.SandboxCommandTimeoutError: exceptions.SandboxTimeoutError,
            exceptions.SandboxRequestTimeoutError: exceptions.SandboxTimeoutError,
            exceptions.SandboxStreamTruncatedError: exceptions.SandboxExecutionError,
            exceptions.NoSuitableRunnerError: exceptions.SandboxError,
            exceptions.SandboxFileError: exceptions.SandboxError,
            exceptions.SandboxError: exceptions.CWSandboxError,
        }
        for child, parent in tree.items():
            self.assertTrue(issubclass(child, parent), child)

    def test_gateway_error_bodies_map_to_classes_with_their_details(self) -> None:
        body = {
            "code": "failed_precondition",
            "message": "no runner's policy admits this sandbox",
            "details": [
                {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "CWSANDBOX_NO_SUITABLE_RUNNER", "domain": "paddock.dev", "metadata": {"a": "b"}},
                {"@type": "type.googleapis.com/google.rpc.BadRequest", "fieldViolations": [{"field": "f", "rule": "max_cpu", "description": "d", "constraint": "r1"}]},
                {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "1.5s"},
            ],
        }
        e = exceptions.error_from_body(body, 400)
        self.assertIsInstance(e, exceptions.NoSuitableRunnerError)
        self.assertEqual((e.code, e.reason, e.metadata, e.retry_delay, e.http_status), ("failed_precondition", "CWSANDBOX_NO_SUITABLE_RUNNER", {"a": "b"}, 1.5, 400))
        assert isinstance(e, exceptions.NoSuitableRunnerError)
        self.assertEqual(list(e.runner_violations), ["r1"])
        self.assertIsInstance(exceptions.error_from_body({"code": "unavailable", "message": "x"}), exceptions.SandboxUnavailableError)
        self.assertIsInstance(exceptions.error_from_http(502, b"<html>bad gateway</html>"), exceptions.SandboxUnavailableError)
        self.assertTrue(exceptions.error_from_http(503, b"").retryable)

    def test_configuration_order(self) -> None:
        with mock.patch.dict(os.environ, {}, clear=True):
            self.assertEqual(resolve_config().base_url, DEFAULT_GATEWAY_URL)
            self.assertIsNone(resolve_config().api_key)
        with mock.patch.dict(os.environ, {"PADDOCK_GATEWAY_URL": "http://env:1/", "PADDOCK_API_KEY": "pdk_env"}, clear=True):
            self.assertEqual((resolve_config().base_url, resolve_config().api_key), ("http://env:1", "pdk_env"))
            d = paddock.SandboxDefaults(base_url="http://defaults:2", api_key="pdk_defaults")
            self.assertEqual(resolve_config(defaults=d).base_url, "http://defaults:2")
            self.assertEqual(resolve_config(base_url="http://arg:3", api_key="pdk_arg", defaults=d).api_key, "pdk_arg")
        with self.assertRaisesRegex(ValueError, "http"):
            resolve_config(base_url="ftp://nope")
