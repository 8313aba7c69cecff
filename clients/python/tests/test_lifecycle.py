"""Creating, finding, waiting for, listing and stopping sandboxes, against the real gateway."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from datetime import datetime
from pathlib import Path

import paddock
from paddock import (
    NetworkOptions,
    ResourceOptions,
    Sandbox,
    SandboxDefaults,
    SandboxStatus,
)

from ._support import RUN_TAG, RUNNER_ID, SandboxTestCase, gateway_requests, unique_tag, wait_until

CLIENT_SRC = Path(__file__).resolve().parent.parent / "src"
SANDBOX = "/v1/sandboxes"
ONE_SANDBOX = "/v1/sandboxes/:idVerb"


class RunAndWait(SandboxTestCase):
    def test_run_returns_once_accepted_without_waiting(self) -> None:
        gets, posts = gateway_requests("GET", ONE_SANDBOX), gateway_requests("POST", SANDBOX)
        sb = self.run_sandbox()
        # One create and nothing else: no GET, no :wait long poll before run() returned.
        self.assertEqual(gateway_requests("POST", SANDBOX) - posts, 1)
        self.assertEqual(gateway_requests("GET", ONE_SANDBOX) - gets, 0)
        self.assertIsNotNone(sb.sandbox_id)
        self.assertIn(sb.status, {SandboxStatus.PENDING, SandboxStatus.CREATING, SandboxStatus.RUNNING})

        done, pending = paddock.wait([sb], timeout=120)
        self.assertEqual((done, pending), ([sb], []))
        self.assertIs(sb.wait(timeout=120), sb)
        self.assertIs(sb.status, SandboxStatus.RUNNING)
        self.assertEqual(sb.runner_id, RUNNER_ID)
        self.assertIsNotNone(sb.runner_group_id)
        self.assertIsInstance(sb.started_at, datetime)
        assert sb.started_at is not None and sb.created_at is not None
        self.assertIsNotNone(sb.started_at.tzinfo)
        self.assertLessEqual(sb.created_at, sb.started_at)
        self.assertIsNone(sb.returncode)
        self.assertEqual(sb.service_urls, {})
        self.assertIs(sb.get_status(), SandboxStatus.RUNNING)
        assert sb.status_updated_at is not None
        self.assertLess((datetime.now(sb.status_updated_at.tzinfo) - sb.status_updated_at).total_seconds(), 60)

    def test_operations_wait_for_running_themselves(self) -> None:
        sb = self.run_sandbox()
        # No wait(): exec waits for RUNNING first.
        self.assertEqual(sb.exec(["echo", "ready"]).result(timeout=120).stdout, "ready\n")

    def test_a_sandbox_that_fails_to_start_raises_sandbox_failed(self) -> None:
        sb = self.run_sandbox("/no/such/program")
        with self.assertRaises(paddock.SandboxFailedError) as cm:
            sb.wait(timeout=120)
        self.assertEqual(cm.exception.state_reason, "FAILED_TO_START", f"{sb.state_reason}: {sb.spec}")
        self.assertEqual(cm.exception.sandbox_id, sb.sandbox_id)
        self.assertIn("/no/such/program", str(cm.exception))
        self.assertIs(sb.status, SandboxStatus.FAILED)

    def test_wait_times_out(self) -> None:
        sb = self.run_sandbox("sleep", "600")
        sb.wait(timeout=120)
        with self.assertRaises(paddock.SandboxTimeoutError):
            sb.wait_until_complete(timeout=0.5).result(timeout=30)


class WaitUntilComplete(SandboxTestCase):
    def test_returns_the_exit_code(self) -> None:
        sb = self.run_sandbox("sh", "-c", "sleep 0.3; exit 7")
        self.assertEqual(sb.wait_until_complete(timeout=120).result(timeout=150), 7)
        self.assertEqual(sb.returncode, 7)
        self.assertEqual(sb.state_reason, "EXITED")
        self.assertTrue(sb.status and sb.status.is_terminal)

    def test_zero_exit(self) -> None:
        sb = self.run_sandbox("true")
        self.assertEqual(sb.wait_until_complete(timeout=120).result(timeout=150), 0)
        self.assertIs(sb.status, SandboxStatus.COMPLETED)

    def test_a_stopped_sandbox_raises_unless_told_not_to(self) -> None:
        sb = self.run_sandbox()
        sb.stop().result(timeout=120)
        with self.assertRaises(paddock.SandboxTerminatedError) as cm:
            sb.wait_until_complete(timeout=60).result(timeout=90)
        self.assertEqual(cm.exception.reason, "CWSANDBOX_SANDBOX_TERMINATED")
        self.assertIn("STOPPED_BY_USER", str(cm.exception))
        # Told not to raise, it gives the exit code the platform recorded (if it recorded one).
        self.assertEqual(sb.wait_until_complete(raise_on_termination=False).result(timeout=90), sb.returncode)

    def test_is_awaitable(self) -> None:
        import asyncio

        sb = self.run_sandbox("sh", "-c", "exit 3")

        async def main() -> object:
            return await sb.wait_until_complete(timeout=120)

        self.assertEqual(asyncio.run(main()), 3)


class Stop(SandboxTestCase):
    def test_two_stops_coalesce_into_one(self) -> None:
        sb = self.run_sandbox().wait(timeout=120)
        before = gateway_requests("DELETE", "/v1/sandboxes/:id")
        first, second = sb.stop(), sb.stop()
        self.assertIs(first, second)
        first.result(timeout=120)
        second.result(timeout=1)
        self.assertIs(sb.stop(), first)  # and after it succeeded
        self.assertEqual(gateway_requests("DELETE", "/v1/sandboxes/:id") - before, 1)
        self.assertIs(sb.status, SandboxStatus.COMPLETED)
        self.assertEqual(sb.state_reason, "STOPPED_BY_USER")

    def test_stop_completes_only_once_the_platform_confirms_the_end(self) -> None:
        # A main process that ignores SIGTERM lives through its grace period. RUNNING means it
        # started, not that the shell has installed its trap yet: it says so with a file.
        sb = self.run_sandbox("sh", "-c", "trap '' TERM; touch /tmp/trap-set; sleep 600 & wait").wait(timeout=120)
        wait_until(lambda: sb.exec(["test", "-f", "/tmp/trap-set"]).result(timeout=60).returncode == 0, 60, "the trap")
        t0 = time.monotonic()
        sb.stop(graceful_shutdown_seconds=2).result(timeout=120)
        self.assertGreaterEqual(time.monotonic() - t0, 1.5)
        self.assertTrue(sb.status and sb.status.is_terminal)
        self.assertTrue(Sandbox.from_id(str(sb.sandbox_id)).result(timeout=30).status in {SandboxStatus.COMPLETED, SandboxStatus.FAILED})

    def test_a_never_started_sandbox_stops_as_a_no_op(self) -> None:
        before = gateway_requests("DELETE", "/v1/sandboxes/:id")
        Sandbox(tags=[RUN_TAG]).stop().result(timeout=5)
        self.assertEqual(gateway_requests("DELETE", "/v1/sandboxes/:id"), before)

    def test_with_stops_the_sandbox_on_exit_even_when_the_body_raises(self) -> None:
        with Sandbox.run(tags=[RUN_TAG]) as sb:
            self.assertEqual(sb.exec(["echo", "inside"]).result(timeout=120).stdout, "inside\n")
        self.assertEqual(sb.state_reason, "STOPPED_BY_USER")
        with self.assertRaises(RuntimeError):
            with Sandbox.run(tags=[RUN_TAG]) as raising:
                raise RuntimeError("the body failed")
        fresh = Sandbox.from_id(str(raising.sandbox_id)).result(timeout=30)
        self.assertTrue(fresh.status and fresh.status.is_terminal)

    def test_async_with(self) -> None:
        import asyncio

        async def main() -> Sandbox:
            async with Sandbox(tags=[RUN_TAG]) as sb:
                result = await sb.exec(["echo", "async"])
                self.assertEqual(result.stdout, "async\n")
            return sb

        sb = asyncio.run(main())
        self.assertTrue(sb.status and sb.status.is_terminal)


class FindAndDelete(SandboxTestCase):
    def test_from_id_in_a_second_process(self) -> None:
        sb = self.run_sandbox().wait(timeout=120)
        sb.write_file("/tmp/marker", b"from the first process").result(timeout=60)
        script = (
            "import json, sys\n"
            "from paddock import Sandbox\n"
            "sb = Sandbox.from_id(sys.argv[1]).result()\n"
            "r = sb.exec(['cat', '/tmp/marker']).result()\n"
            "print(json.dumps({'status': sb.status.value, 'runner': sb.runner_id, 'out': r.stdout}))\n"
        )
        env = {**os.environ, "PYTHONPATH": str(CLIENT_SRC)}
        done = subprocess.run([sys.executable, "-c", script, str(sb.sandbox_id)], env=env, capture_output=True, text=True, timeout=120)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(json.loads(done.stdout), {"status": "running", "runner": RUNNER_ID, "out": "from the first process"})
        # The second process only borrowed it: its exit did not stop the sandbox.
        self.assertIs(sb.get_status(), SandboxStatus.RUNNING)

    def test_a_process_that_exits_stops_what_it_created_and_left_running(self) -> None:
        script = (
            "import sys\n"
            "from paddock import Sandbox\n"
            f"sb = Sandbox.run(tags=[{RUN_TAG!r}]).wait()\n"
            "print(sb.sandbox_id)\n"
        )
        env = {**os.environ, "PYTHONPATH": str(CLIENT_SRC)}
        done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120)
        self.assertEqual(done.returncode, 0, done.stderr)
        left = Sandbox.from_id(done.stdout.strip()).result(timeout=30)
        self.assertTrue(left.status and left.status.is_terminal, left.status)
        self.assertEqual(left.state_reason, "STOPPED_BY_USER")

    def test_missing_sandboxes(self) -> None:
        missing = str(uuid.uuid4())
        with self.assertRaises(paddock.SandboxNotFoundError) as cm:
            Sandbox.from_id(missing).result(timeout=30)
        self.assertEqual(cm.exception.reason, "CWSANDBOX_SANDBOX_NOT_FOUND")
        self.assertEqual(cm.exception.http_status, 404)
        with self.assertRaises(paddock.SandboxNotFoundError):
            Sandbox.delete(missing).result(timeout=30)
        Sandbox.delete(missing, missing_ok=True).result(timeout=30)

    def test_delete_by_id(self) -> None:
        sb = self.run_sandbox().wait(timeout=120)
        Sandbox.delete(str(sb.sandbox_id)).result(timeout=30)
        sb.wait_until_complete(timeout=60, raise_on_termination=False).result(timeout=90)
        self.assertEqual(sb.state_reason, "STOPPED_BY_USER")

    def test_list_filters(self) -> None:
        tag = unique_tag("list")
        a = self.run_sandbox(tags=[tag, "first"])
        b = self.run_sandbox(tags=[tag])
        for sb in (a, b):
            sb.wait(timeout=120)

        def ids(**filters: object) -> set[str]:
            return {str(s.sandbox_id) for s in Sandbox.list(**filters).result(timeout=30)}  # type: ignore[arg-type]

        both = {str(a.sandbox_id), str(b.sandbox_id)}
        self.assertEqual(ids(tags=[tag]), both)
        self.assertEqual(ids(tags=[tag, "first"]), {str(a.sandbox_id)})
        self.assertEqual(ids(tags=[tag], status="running"), both)
        self.assertEqual(ids(tags=[tag], status=SandboxStatus.RUNNING, runner_ids=[RUNNER_ID]), both)
        self.assertEqual(ids(tags=[tag], runner_ids=["no-such-runner"]), set())
        listed = Sandbox.list(tags=[tag, "first"]).result(timeout=30)[0]
        self.assertEqual(listed.runner_id, RUNNER_ID)
        self.assertEqual(listed.exec(["echo", "listed"]).result(timeout=60).stdout, "listed\n")

        b.stop().result(timeout=120)
        self.assertEqual(ids(tags=[tag]), {str(a.sandbox_id)}, f"a is {a.get_status()} ({a.state_reason}), b is {b.status} ({b.state_reason})")
        self.assertEqual(ids(tags=[tag], status="completed"), {str(b.sandbox_id)})
        self.assertEqual(ids(tags=[tag], show_terminated=True), both)


class OptionsAndSessions(SandboxTestCase):
    def test_options_reach_the_platform(self) -> None:
        sb = self.run_sandbox(
            container_image="paddock/base",
            environment_variables={"GREETING": "hello from the spec"},
            mounted_files=[{"mount_path": "/tmp/conf/app.bin", "file_content": b"\x00\x01\xffconfig"}],
            max_lifetime_seconds=900,
            network=NetworkOptions(deny_egress=True),
            resources=ResourceOptions(requests={"cpu": "250m", "memory": "128Mi"}, limits={"cpu": "500m", "memory": "256Mi"}),
        )
        self.assertEqual(sb.exec(["sh", "-c", "echo $GREETING"]).result(timeout=120).stdout, "hello from the spec\n")
        self.assertEqual(sb.read_file("/tmp/conf/app.bin").result(timeout=60), b"\x00\x01\xffconfig")
        # The spec as the platform accepted it.
        self.assertEqual(sb.spec.get("maxLifetimeSeconds"), 900)
        container = sb.spec["containers"][0]
        self.assertEqual(container["resourceRequirements"], {"requests": {"cpu": "250m", "memory": "128Mi"}, "limits": {"cpu": "500m", "memory": "256Mi"}})
        self.assertEqual(container["image"], "paddock/base")
        self.assertEqual(sb.spec.get("network"), {"denyEgress": True})
        # And what the runner's policy resolved from it.
        sb.get_status()
        self.assertEqual(sb.effective_max_lifetime_seconds, 900)
        self.assertEqual((sb.resource_requests or {}).get("cpu"), "250m")
        self.assertEqual((sb.resource_limits or {}).get("memory"), "256Mi")
        self.assertIn(RUN_TAG, sb.spec.get("tags", []))

    def test_an_option_the_runner_cannot_honour_is_refused_by_name(self) -> None:
        # The local backend runs no pod, so annotations would reach nothing: refused, not dropped.
        with self.assertRaises(paddock.NoSuitableRunnerError) as refused:
            self.run_sandbox(container_image="paddock/base", annotations={"team.example/owner": "python"})
        self.assertIn("annotations", [v.field for v in refused.exception.violations])

    def test_bad_options_fail_before_anything_is_sent(self) -> None:
        before = gateway_requests("POST", SANDBOX)
        with self.assertRaisesRegex(ValueError, "cpus"):
            Sandbox.run(resources={"cpus": "1"})
        with self.assertRaisesRegex(ValueError, "placement_mode"):
            Sandbox.run(placement_mode="moon")
        with self.assertRaisesRegex(ValueError, "runner_ids"):
            Sandbox.run(runner_ids=[RUNNER_ID], placement_mode="serverless")
        with self.assertRaisesRegex(ValueError, "max_lifetime_seconds"):
            Sandbox.run(max_lifetime_seconds=0)
        with self.assertRaises(TypeError):
            Sandbox.run(no_such_option=True)
        self.assertEqual(gateway_requests("POST", SANDBOX), before)

    def test_session_defaults_and_overrides(self) -> None:
        tag = unique_tag("session")
        defaults = SandboxDefaults(
            tags=(RUN_TAG, tag),
            environment_variables={"A": "from-defaults", "B": "from-defaults"},
            resources={"cpu": "500m", "memory": "256Mi"},
            max_lifetime_seconds=600,
        )
        with Sandbox.session(defaults) as session:
            own = session.sandbox(environment_variables={"B": "own"}, tags=["extra"], resources={"cpu": "250m", "memory": "128Mi"})
            self.assertIsNone(own.sandbox_id)  # created on first use
            self.assertEqual(own.exec(["sh", "-c", 'echo "$A $B"']).result(timeout=120).stdout, "from-defaults own\n")
            self.assertEqual(own.spec["containers"][0]["resources"], {"cpu": "250m", "memory": "128Mi"})
            self.assertTrue({RUN_TAG, tag, "extra"} <= set(own.spec.get("tags", [])))
            plain = session.run()
            plain.wait(timeout=120)
            self.assertEqual(plain.spec["containers"][0]["resources"], {"cpu": "500m", "memory": "256Mi"})
            self.assertEqual(plain.spec.get("maxLifetimeSeconds"), 600)
            plain.get_status()
            self.assertEqual(plain.effective_max_lifetime_seconds, 600)
            self.assertEqual((plain.resource_requests or {}).get("cpu"), "500m")
            self.assertEqual(session.sandbox_count, 2)
            self.assertEqual({s.sandbox_id for s in session.list().result(timeout=30)}, {own.sandbox_id, plain.sandbox_id})
        for sb in (own, plain):
            self.assertTrue(Sandbox.from_id(str(sb.sandbox_id)).result(timeout=30).status in {SandboxStatus.COMPLETED, SandboxStatus.FAILED})


class ErrorsAndRetries(SandboxTestCase):
    def test_a_policy_refusal_names_the_constraint_and_is_not_retried(self) -> None:
        tag = unique_tag("refused")
        before = gateway_requests("POST", SANDBOX)
        with self.assertRaises(paddock.NoSuitableRunnerError) as cm:
            Sandbox.run(resources={"cpu": "8", "memory": "256Mi"}, tags=[RUN_TAG, tag])
        e = cm.exception
        self.assertIsInstance(e, paddock.SandboxError)
        self.assertIsInstance(e, paddock.CWSandboxError)
        self.assertEqual(e.reason, "CWSANDBOX_NO_SUITABLE_RUNNER")
        self.assertEqual(e.code, "failed_precondition")
        self.assertFalse(e.retryable)
        self.assertIn("constraints.resources.maxCpu", str(e))
        mine = e.runner_violations[RUNNER_ID]
        self.assertTrue(any(v.rule == "max_cpu" and v.field == "containers[0].resources.cpu" and "constraints.resources.maxCpu" in v.description for v in mine), mine)
        self.assertEqual(gateway_requests("POST", SANDBOX) - before, 1)
        self.assertEqual(Sandbox.list(tags=[tag], show_terminated=True).result(timeout=30), [])

        with self.assertRaises(paddock.NoSuitableRunnerError) as denied:
            Sandbox.run(annotations={"paddock.dev/owner": "me"}, tags=[RUN_TAG])
        self.assertIn("paddock.dev/", str(denied.exception))

    def test_retryable_answers_are_retried_with_backoff(self) -> None:
        before = gateway_requests("POST", SANDBOX)
        with self.assertRaises(paddock.SandboxUnavailableError) as cm:
            # No runner by that id is connected: 503, "retry with backoff".
            Sandbox.run(runner_ids=["no-such-runner"], tags=[RUN_TAG], defaults=SandboxDefaults(max_retries=2))
        self.assertEqual(cm.exception.reason, "CWSANDBOX_RUNNER_UNAVAILABLE")
        self.assertTrue(cm.exception.retryable)
        self.assertEqual(gateway_requests("POST", SANDBOX) - before, 3)

    def test_a_bad_key_is_an_authentication_error(self) -> None:
        with self.assertRaises(paddock.CWSandboxAuthenticationError) as cm:
            Sandbox.list(api_key="pdk_not-a-real-key").result(timeout=30)
        self.assertEqual(cm.exception.code, "unauthenticated")
        self.assertEqual(cm.exception.http_status, 401)

    def test_a_spec_the_platform_refuses_names_the_field(self) -> None:
        with self.assertRaises(paddock.CWSandboxError) as cm:
            Sandbox.run(resources={"cpu": "lots"}, tags=[RUN_TAG])
        self.assertTrue(any(v.field == "containers[0].resources.cpu" for v in cm.exception.violations), cm.exception.violations)
