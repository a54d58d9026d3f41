"""schemathesis against the running service (tests/api/fuzz_run.py): every operation of /openapi.json, with its
examples, boundary cases, fuzzed cases and the links between operations followed, on each engine.

It checks every answer: no 5xx; the status documented for the operation; the content type, body and required headers
(Retry-After) as documented; 401 without credentials or with bad ones; 405 with Allow for an undocumented method;
data outside the schema refused with a 4xx. st's report is the failure message.

A run takes seconds, spent in processes of its own (the service and st): the runs start at the run's first test, one
engine after the other, beside every other test and at a lower priority, and these tests come last and read their
outcome.
"""
from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import gevent
import gevent.event
import pytest

from tests.support.constants import POSTGRES_URL
from tests.support.head_starts import head_start

pytestmark = pytest.mark.last

ROOT = Path(__file__).resolve().parents[2]
ENGINES = ["sqlite"] + (["postgres"] if POSTGRES_URL else [])
#: One run's bound, far above what it takes (the cases are bounded in the config); a hang fails, not stalls.
RUN_TIMEOUT_SECONDS = 300
#: The runs' CPU priority, below the tests': they take the time the tests leave idle (most of a core, most of the
#: run), rather than slowing the tests they run beside.
NICENESS = 10


class FuzzRuns:
    """A run of fuzz_run.py per engine, one after the other, in a greenlet of its own."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.outcomes = {engine: gevent.event.AsyncResult() for engine in ENGINES}
        self.running: subprocess.Popen | None = None
        self.greenlet = gevent.spawn(self._run_each)

    def _run_each(self) -> None:
        for engine, outcome in self.outcomes.items():
            folder = self.folder / engine
            folder.mkdir()
            with open(folder / "run.log", "wb") as log:
                self.running = subprocess.Popen(
                    ["nice", "-n", str(NICENESS), sys.executable, "-m", "tests.api.fuzz_run", engine, str(folder)],
                    cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
            try:
                self.running.wait(timeout=RUN_TIMEOUT_SECONDS)
            except subprocess.TimeoutExpired:
                self.stop()
            outcome.set(self.running.returncode)

    def report(self, engine: str) -> tuple[int, str]:
        """The engine's run, once finished: its exit status, and st's report (or why st did not run)."""
        code = self.outcomes[engine].get(timeout=len(ENGINES) * RUN_TIMEOUT_SECONDS)
        folder = self.folder / engine
        if not (folder / "st.out").exists():
            return code, "st did not run:\n" + (folder / "run.log").read_text(errors="replace")[-5_000:]
        return code, (folder / "st.out").read_text()[-20_000:] + (folder / "st.err").read_text()[-2_000:]

    def stop(self) -> None:
        """Kill a run still going, with the st it started (its process group)."""
        if self.running is not None and self.running.poll() is None:
            os.killpg(self.running.pid, signal.SIGKILL)
            self.running.wait()


@head_start("fuzz_runs", at_first_test=True)
def started_fuzz_runs():
    folder = Path(tempfile.mkdtemp(prefix="toolgate-fuzz-"))
    runs = FuzzRuns(folder)
    try:
        yield runs
    finally:
        runs.greenlet.kill()
        runs.stop()
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="session")
def fuzz_runs(head_starts):
    return head_starts["fuzz_runs"].get()


@pytest.mark.parametrize("engine", ["sqlite", pytest.param("postgres", marks=pytest.mark.skipif(
    not POSTGRES_URL, reason="TOOLGATE_TEST_POSTGRES_URL is not set"))])
def test_every_operation_answers_as_documented(fuzz_runs, engine):
    code, report = fuzz_runs.report(engine)
    assert code == 0, f"exit status {code}\n{report}"
    selected, tested = re.search(r"Selected: (\d+)/(\d+)", report), re.search(r"Tested: (\d+)", report)
    assert selected and tested and tested.group(1) == selected.group(2), report  # every operation, none skipped
