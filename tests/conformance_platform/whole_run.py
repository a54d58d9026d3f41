"""The kit's whole suite as CI runs it, in the background: `toolgate conformance platform` on a platform of its own.

That run takes seconds, most of them on one core (the kit and its platform answer each other in turn), and so
do the broken platforms' tests, in this process, on its platform. Started with the folder's first test, the run
goes on beside them on the machine's other core, and its test only reads the outcome.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from tests.conformance_platform.state import DEADLINE_SECONDS

TOOLGATE = str(Path(sys.executable).with_name("toolgate"))
#: The longest the whole run may take: it starts a platform, runs every case and stops everything.
RUN_TIMEOUT_SECONDS = 180


@dataclass
class WholeRun:
    """One `toolgate conformance platform` process; its reports are `json` and `junit` in `folder`."""

    process: subprocess.Popen
    folder: Path

    @classmethod
    def start(cls, folder: Path) -> WholeRun:
        """Start the run, in a process group of its own, so the platform it starts can be stopped with it."""
        # The deadline lowered as the other tests of the kit lower it; CI's own run (.ci/run) keeps the spec's ten.
        command = [TOOLGATE, "conformance", "platform", "--json", str(folder / "r.json"),
                   "--junit", str(folder / "r.xml"), "--call-deadline-seconds", f"{DEADLINE_SECONDS:g}"]
        with open(folder / "stdout", "wb") as out, open(folder / "stderr", "wb") as err:
            return cls(subprocess.Popen(command, stdout=out, stderr=err, start_new_session=True), folder)

    def finished(self) -> subprocess.CompletedProcess:
        """Wait for the run; its exit status and output."""
        try:
            self.process.wait(timeout=RUN_TIMEOUT_SECONDS)
        finally:
            self.stop()
        return subprocess.CompletedProcess(self.process.args, self.process.returncode,
                                           (self.folder / "stdout").read_text(), (self.folder / "stderr").read_text())

    def stop(self) -> None:
        """End the run and whatever it started, if it is still going (a test session cut short)."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
