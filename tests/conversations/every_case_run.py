"""The one step that waits on the real ten-second deadline, in a process of its own: test_failure_kinds.py starts it
at the run's first test, at a lower priority, and reads what it prints.

A platform, a mock and a scripted model of their own (the kit's launcher: their own processes and database, the
spec's deadline); one step carries every failure kind and boundary, so the deadline is waited on once. Prints one
JSON line: the turn, the step's results, the calls the mock saw and the platform's call log for the turn.

    python -m tests.conversations.every_case_run
"""
# gevent must patch before anything imports socket, ssl or threading (STYLE: first line of each process entry point).
from gevent import monkey

monkey.patch_all()

import json  # noqa: E402

import requests  # noqa: E402

from conformance.platform.launch import ORG, local_platform  # noqa: E402
from service.config import Config  # noqa: E402
from tests.support.definitions import tool  # noqa: E402
from tests.support.live import Conversation, LiveService, publish_project  # noqa: E402

#: The mock keeps `too_slow` this long, past the deadline: a call still waiting then was not cut off at the deadline.
TOO_SLOW_SECONDS = 11
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


def run() -> dict:
    """Take the step; what the test checks."""
    with local_platform() as started:
        # The launcher's admin key also mints session tokens: it stands in for the backend key.
        platform = LiveService(url=started.url, config=Config(public_url=started.url), org=ORG,
                               admin_key=started.admin_key, agent_key=started.agent_key, backend_key=started.admin_key)
        backend = started.mock_url
        tools = [tool(name, f"{backend}/tools/{name}{path}") for name, (path, _) in CASES.items()]
        tools.append(tool("closed_port", "http://127.0.0.1:9/nothing"))
        tools.append(tool("no_such_host", "http://no-such-host.invalid/x"))
        publish_project(platform, tools)
        conversation = Conversation(platform, platform.session_token("alice"))
        turn = conversation.turn()
        results = conversation.step(turn, *[(t["name"], {}) for t in tools], ("hallucinated_tool", {}))
        seen = requests.get(f"{backend}/_calls", timeout=5).json()["calls"]
        records = platform.api("GET", f"/v1/calls?turn={turn}&limit=100").json()["calls"]
        return {"turn": turn, "results": results, "seen": seen, "records": records}


if __name__ == "__main__":
    print(json.dumps(run()), flush=True)
