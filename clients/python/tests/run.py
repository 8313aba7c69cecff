"""Runs the suite and writes one JSON record per test, for the vitest spec that reports them.

    python3 tests/run.py --list               # the test ids, one per line (nothing runs)
    python3 tests/run.py --json results.json  # runs them; verbose progress on stderr
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import traceback
import unittest
from pathlib import Path
from types import TracebackType
from typing import Any, Dict, Iterator, Optional, Tuple, Type, Union

CLIENT = Path(__file__).resolve().parent.parent
ErrInfo = Union[Tuple[Type[BaseException], BaseException, Optional[TracebackType]], Tuple[None, None, None]]


def discover() -> unittest.TestSuite:
    sys.path[:0] = [str(CLIENT / "src"), str(CLIENT)]
    return unittest.defaultTestLoader.discover(str(CLIENT / "tests"), top_level_dir=str(CLIENT))


def cases(suite: unittest.TestSuite) -> Iterator[unittest.TestCase]:
    for t in suite:
        if isinstance(t, unittest.TestSuite):
            yield from cases(t)
        else:
            yield t


class RecordingResult(unittest.TextTestResult):
    """A text result that also keeps each test's outcome, duration and traceback."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.records: Dict[str, Dict[str, Any]] = {}
        self._started: Dict[str, float] = {}

    def startTest(self, test: unittest.TestCase) -> None:
        self._started[test.id()] = time.monotonic()
        super().startTest(test)

    def _record(self, test: unittest.TestCase, outcome: str, err: Optional[ErrInfo] = None) -> None:
        detail = "".join(traceback.format_exception(*err)) if err and err[0] is not None else ""
        previous = self.records.get(test.id())
        if previous and previous["outcome"] != "passed":
            outcome, detail = previous["outcome"], previous["detail"] + detail  # a failing subtest stays a failure
        self.records[test.id()] = {"outcome": outcome, "seconds": round(time.monotonic() - self._started.get(test.id(), time.monotonic()), 3), "detail": detail}

    def addSuccess(self, test: unittest.TestCase) -> None:
        super().addSuccess(test)
        self._record(test, "passed")

    def addFailure(self, test: unittest.TestCase, err: Any) -> None:
        super().addFailure(test, err)
        self._record(test, "failed", err)

    def addError(self, test: unittest.TestCase, err: Any) -> None:
        super().addError(test, err)
        # An error in setUpClass arrives on a placeholder: charge it to every test of that class.
        self._record(test, "failed", err)

    def addSubTest(self, test: unittest.TestCase, subtest: unittest.TestCase, err: Any) -> None:
        super().addSubTest(test, subtest, err)
        if err is not None:
            self._record(test, "failed", err)

    def addSkip(self, test: unittest.TestCase, reason: str) -> None:
        super().addSkip(test, reason)
        self._record(test, "skipped")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--list", action="store_true")
    parser.add_argument("--json")
    args = parser.parse_args()
    suite = discover()
    if args.list:
        for t in cases(suite):
            print(t.id())
        return 0
    runner = unittest.TextTestRunner(stream=sys.stderr, verbosity=2, resultclass=RecordingResult)
    result = runner.run(suite)
    assert isinstance(result, RecordingResult)
    if args.json:
        Path(args.json).write_text(json.dumps(result.records, indent=1), encoding="utf-8")
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
