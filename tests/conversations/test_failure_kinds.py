"""Every failure kind end to end: the platform calls real endpoints on loopback and hands back the spec's object."""
import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
import requests

from service.limits import CALL_DEADLINE_SECONDS
from tests.conversations.every_case_run import CASES, TOO_SLOW_SECONDS
from tests.support.definitions import tool
from tests.support.head_starts import head_start
from tests.support.live import Conversation, publish_project

#: A call's clock may read a little under the deadline when the timer fires (the loop's time is cached).
TIMER_SLACK_MS = 100
ROOT = Path(__file__).parents[2]
#: Far above the step's ten seconds and its processes' start: a hang fails rather than stalls.
RUN_TIMEOUT_SECONDS = 120


@head_start("every_case_step", at_first_test=True)
def started_every_case_step():
    """The one step that waits on the real ten-second deadline (every other test injects a shorter one), taken in a
    process of its own (every_case_run.py) from the run's first test (tests.support.head_starts.head_start), at a lower priority:
    its ten seconds pass beside other tests rather than as one of them, and its processes' start takes only the CPU
    the tests leave idle (at full priority it slowed the tests it began beside). Niceness 5, not 10: beside two parts
    of the suite busy on both cores, a tenth of a core left its platform more than the kit's 30 s to start."""
    process = subprocess.Popen(["nice", "-n", "5", sys.executable, "-m", "tests.conversations.every_case_run"],
                               cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        out, err = process.communicate(timeout=RUN_TIMEOUT_SECONDS)
        yield process.returncode, out, err
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


@pytest.fixture
def every_case_step(head_starts):
    code, out, err = head_starts["every_case_step"].get()
    assert code == 0, err[-5_000:]
    step = json.loads(out.strip().splitlines()[-1])
    return step["turn"], step["results"], step["seen"], step["records"]


def test_every_failure_kind_and_boundary_in_one_parallel_step(every_case_step):
    turn, results, seen, records = every_case_step
    by_name = {r["name"]: r for r in results}
    for name, (_, expected) in CASES.items():
        got = {k: v for k, v in by_name[name].items() if k in ("output", "error")}
        assert got == expected, name
    transport = {"status": "error", "kind": "transport-error"}
    assert by_name["closed_port"]["error"] == transport
    assert by_name["no_such_host"]["error"] == transport
    assert by_name["hallucinated_tool"]["error"] == {"status": "error", "kind": "unknown-tool"}
    # The calls overlapped, so the step cost one deadline: the three slow ones were all at the mock at one moment
    # (one after another, each would arrive only once the one before had ended).
    slow = [c for c in seen if c["turn"] == turn and c["tool"] in ("slow_but_in_time", "too_slow", "drip")]
    assert len(slow) == 3 and max(c["started"] for c in slow) < min(c["ended"] or math.inf for c in slow)
    assert [r["id"] for r in results] == [str(i) for i in range(len(results))]  # the calls' order

    logged = {r["tool"]: r for r in records}  # the call log, as the platform's API shows it
    assert len(logged) == len(results)
    assert logged["over_cap"]["kind"] == "response-too-big" and logged["over_cap"]["size"] == "over the cap"
    assert logged["exact_cap"]["kind"] == "ok" and logged["exact_cap"]["size"] == 16384
    assert logged["refused"]["status"] == 404
    for cut in ("too_slow", "drip"):  # by the call's own clock: at the deadline, not before, not when the mock ended
        assert CALL_DEADLINE_SECONDS * 1000 - TIMER_SLACK_MS <= logged[cut]["latency_ms"] < TOO_SLOW_SECONDS * 1000
    assert logged["hallucinated_tool"]["kind"] == "unknown-tool" and logged["hallucinated_tool"]["jti"] is None
    assert all(r["turn"] == turn and r["subject"] == "alice" for r in records)


def test_loopback_is_refused_unless_the_operator_allows_it(tmp_path):
    from tests.support.live import live_service, mock_backend

    with live_service(tmp_path, allowed_networks=()) as service, mock_backend([service.issuer]) as backend:
        publish_project(service, [tool("local", backend + "/tools/local/echo")])
        conversation = Conversation(service, service.session_token("alice"))
        result = conversation.step(conversation.turn(), ("local", {}))[0]
        assert result["error"] == {"status": "error", "kind": "transport-error"}
        assert requests.get(backend + "/_calls", timeout=5).json() == {"calls": []}  # nothing reached it
