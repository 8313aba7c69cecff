"""The README's Python quick starts run as printed, against the real platform."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from ._support import SandboxTestCase

CLIENT = Path(__file__).resolve().parent.parent
READMES = {
    "root README, Python section": (CLIENT.parent.parent / "README.md", "### Sandboxes from Python"),
    "clients/python/README.md, quick start": (CLIENT / "README.md", "## Quick start"),
}


def first_python_block(readme: Path, heading: str) -> str:
    text = readme.read_text(encoding="utf-8")
    start = text.index(heading)
    m = re.search(r"```python\n(.*?)```", text[start:], re.S)
    assert m is not None, f"no python block after {heading!r} in {readme}"
    return m.group(1)


class QuickStart(SandboxTestCase):
    def test_the_quick_starts_run_as_printed(self) -> None:
        for name, (readme, heading) in READMES.items():
            with self.subTest(name):
                code = first_python_block(readme, heading)
                env = {**os.environ, "PYTHONPATH": str(CLIENT / "src")}
                done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=180)
                self.assertEqual(done.returncode, 0, done.stderr)
                for expected in ("0 42\n", "step 1\nstep 2\nstep 3\n", "booted\n"):
                    self.assertIn(expected, done.stdout)
