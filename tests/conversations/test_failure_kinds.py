"""Every failure kind end to end: the platform calls real endpoints on loopback and hands back the spec's object."""
import math

import pytest
import requests

from conformance.platform.launch import local_platform
from service.limits import CALL_DEADLINE_SECONDS
from tests.helpers import Conversation, head_start, publish_project, tool

#: The mock keeps `too_slow` this long, past the deadline: a call still waiting then was not cut off at the deadline.
TOO_SLOW_SECONDS = 11
#: A call's clock may read a little under the deadline when the timer fires (the loop's time is cached).
TIMER_SLACK_MS = 100

CASES = {
    # name: (path on the mock, expected result)
    "exact_cap": ("/chars/16384?char=%C3%A9", {"output": "é" * 16384}),
    "over_cap": ("/chars/16385?char=%C3%A9", {"error": {"status": "error", "kind": "response-too-big", "httpCode": 200}}),
    "huge": ("/chars/1073741824", {"error": {"status": "error", "kind": "response-too-big", "httpCode": 200}}),
    "gzip_bomb": ("/gzip-bomb", {"error": {"status": "error", "kind": "response-too-big", "httpCode": 200}}),
    "refused": ("/status/404", {"error": {"status": "error", "kind": "refused", "httpCode": 404}}),
    "returned_nothing": ("/status/500/empty", {"error": {"status": "error", "kind": "returned-nothing", "httpCode": 500}}),
    "empty_success": ("/status/204/empty", {"output": ""}),
    "redirect_with_body": ("/redirect?code=302&body=1", {"error": {"status": "error", "kind": "refused", "httpCode": 302}}),
    "redirect_empty": ("/redirect?code=302&body=0", {"error": {"status": "error", "kind": "returned-nothing", "httpCode": 302}}),
    "slow_but_in_time": ("/delay/9", {"output": '{"slept":9.0}\n'}),
    "too_slow": (f"/delay/{TOO_SLOW_SECONDS}", {"error": {"status": "error", "kind": "timed-out"}}),
    "drip": ("/drip?bytes=10000&interval=1", {"error": {"status": "error", "kind": "timed-out"}}),
    "reset": ("/fault/reset", {"error": {"status": "error", "kind": "transport-error"}}),
    "empty_response": ("/fault/empty-response", {"error": {"status": "error", "kind": "transport-error"}}),
}


class Platform:
    """What `publish_project` and `Conversation` need of a platform the kit's launcher started."""

    def __init__(self, started):
        self.url, self.admin_key = started.url, started.admin_key

    def api(self, method, path, key=None, **kwargs):
        return requests.request(method, self.url + path, headers={"Authorization": f"Bearer {key or self.admin_key}"},
                                timeout=30, **kwargs)

    def session_token(self, subject):
        response = self.api("POST", "/v1/session-tokens", json={"subject": subject})
        assert response.status_code == 201, response.text
        return response.json()["token"]

    def as_session(self, method, path, token, **kwargs):
        return requests.request(method, self.url + path, headers={"Authorization": f"Bearer {token}"}, timeout=60,
                                **kwargs)


@head_start("every_case_step", at_first_test=True)
def started_every_case_step():
    """The one step that waits on the real ten-second deadline (every other test injects a shorter one), against a
    platform, a mock and their database of their own, in processes of their own (the kit's launcher), with the
    spec's deadline. One step carries every case, so it is waited on once, not once per case; and it is taken as a
    head start (tests.helpers.head_start) from the run's first test, so its ten seconds pass beside other tests rather
    than as one of them (begun with the kit's folder, its processes' start slowed the broken platforms there).
    Yields the step's results, the calls the mock saw and the platform's call log for the turn."""
    with local_platform() as started:
        platform, backend = Platform(started), started.mock_url
        tools = [tool(name, f"{backend}/tools/{name}{path}") for name, (path, _) in CASES.items()]
        tools.append(tool("closed_port", "http://127.0.0.1:9/nothing"))
        tools.append(tool("no_such_host", "http://no-such-host.invalid/x"))
        publish_project(platform, tools)
        conversation = Conversation(platform, platform.session_token("alice"))
        turn = conversation.turn()
        results = conversation.step(turn, *[(t["name"], {}) for t in tools], ("hallucinated_tool", {}))
        seen = requests.get(f"{backend}/_calls", timeout=5).json()["calls"]
        records = platform.api("GET", f"/v1/calls?turn={turn}&limit=100").json()["calls"]
        yield turn, results, seen, records


@pytest.fixture
def every_case_step(head_starts):
    return head_starts["every_case_step"].get()


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
    from tests.helpers import live_service, mock_backend

    with live_service(tmp_path, allowed_networks=()) as service, mock_backend([service.issuer]) as backend:
        publish_project(service, [tool("local", backend + "/tools/local/echo")])
        conversation = Conversation(service, service.session_token("alice"))
        result = conversation.step(conversation.turn(), ("local", {}))[0]
        assert result["error"] == {"status": "error", "kind": "transport-error"}
        assert requests.get(backend + "/_calls", timeout=5).json() == {"calls": []}  # nothing reached it
