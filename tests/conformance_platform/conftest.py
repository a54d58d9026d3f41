"""A real platform and mock, started once per run, behind the three broken doubles.

The platform's public URL is the front double's, so its issuer, and the key set the mock and the
kit fetch, are reached through the front double too; its tools call the back double, which
forwards to the mock; it runs turns with the model double, which forwards to the scripted model.
With no fault switched on, the doubles are transparent.
"""
from __future__ import annotations

from dataclasses import dataclass

import pytest

from conformance.platform.client import PlatformTarget
from conformance.platform.launch import Started, local_platform
from conformance.platform.model import ScriptedModel
from conformance.platform.preflight import preflight
from tests.conformance_platform.back import Back
from tests.conformance_platform.forwarding import quiet_server, wsgi
from tests.conformance_platform.front import Front
from tests.conformance_platform.model_double import ModelDouble
from tests.conformance_platform.state import DEADLINE_SECONDS, Shared
from tests.conformance_platform.whole_run import WholeRun
from tests.support.head_starts import head_start
from tests.support.loopback import serving

#: The test that reads the whole run's outcome (tests/conformance_platform/test_command.py).
WHOLE_RUN_TEST = "test_the_whole_suite_passes_against_a_platform_the_kit_starts"


@dataclass
class Doubles:
    front: Front
    back: Back
    model: ModelDouble
    shared: Shared
    url: str
    mock_url: str
    started: Started

    def switch(self, front: dict, back: dict, model: dict | None = None) -> None:
        """Switch on exactly these faults."""
        self.shared.reset_faults()
        self.front.faults, self.back.faults, self.model.faults = dict(front), dict(back), dict(model or {})

    def arguments(self) -> list[str]:
        """The kit's command line for the broken platform."""
        return ["platform", "--url", self.url, "--admin-key", self.started.admin_key,
                "--agent-key", self.started.agent_key, "--mock-url", self.mock_url,
                "--model-url", self.started.model_url, "--call-deadline-seconds", f"{DEADLINE_SECONDS:g}"]


@head_start("doubles")
def started_doubles():
    """The doubles in front of a platform the kit starts (seconds of processes starting), begun ahead, beside the
    tests of the folder before this one (tests.support.head_starts.head_start)."""
    shared = Shared()
    front, back, model = Front(shared), Back(shared), ModelDouble()
    with serving(wsgi(front.handle), quiet_server) as front_url, serving(wsgi(back.handle), quiet_server) as back_url, \
            serving(wsgi(model.handle), quiet_server) as model_url:
        with local_platform(public_url=front_url, model_via=model_url,
                            call_deadline_seconds=DEADLINE_SECONDS) as started:
            front.upstream, front.admin_key = started.url, started.admin_key
            back.upstream = started.mock_url
            model.upstream = started.model_url
            # The kit's pre-flight, once: the platform's first turn imports its model client, a second's work
            # done here rather than in the first test's run.
            preflight(PlatformTarget(front_url, started.admin_key, back_url, started.agent_key,
                                     model=ScriptedModel(started.model_url), deadline=DEADLINE_SECONDS))
            yield Doubles(front, back, model, shared, front_url, back_url, started)


@pytest.fixture(scope="session")
def doubles(head_starts):
    """One platform for the whole run: each test switches on its own faults."""
    return head_starts["doubles"].get()


@pytest.fixture(scope="session", autouse=True)
def whole_run(request, tmp_path_factory):
    """The kit's whole suite on a platform of its own, started with this folder's first test to run beside the
    others (see whole_run.py); None when its test is not selected."""
    if not any(item.name == WHOLE_RUN_TEST for item in request.session.items):
        yield None
        return
    run = WholeRun.start(tmp_path_factory.mktemp("whole-run"))
    try:
        yield run
    finally:
        run.stop()
