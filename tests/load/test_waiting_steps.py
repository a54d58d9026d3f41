"""Steps wait on slow tools without holding a database connection, and each organization keeps to its share."""
import json
import time
from dataclasses import replace

import gevent
import requests

from mock_backend.gathering import MAX_GATHERING_SIZE
from service.limits import CALL_DEADLINE_SECONDS
from tests.support.definitions import gathered, gathering_tool, make_org, tool
from tests.support.live import Conversation, live_service, mock_backend, publish_project
from tests.support.loopback import wait_for

#: Steps waiting at once, on a pool of POOL database connections: as many as one gathering of the mock can hold.
STEPS_AT_ONCE = MAX_GATHERING_SIZE
POOL = 4
#: How long a held call waits at the mock for the rest of its group: within the call deadline, so that a group that
#: never meets is ended by the mock (`met: false`), and the failure says so.
HELD_SECONDS = CALL_DEADLINE_SECONDS - 1


def calls_at_the_mock(backend: str, tool_name: str) -> int:
    """How many calls of `tool_name` have reached the mock so far."""
    return sum(c["tool"] == tool_name for c in requests.get(backend + "/_calls", timeout=5).json()["calls"])


def test_a_hundred_steps_wait_at_once_on_a_pool_of_four_connections(tmp_path, database_url):
    with live_service(tmp_path, database_url, database_pool_size=POOL) as service, \
            mock_backend([service.issuer]) as backend:
        # Each step's call waits at the mock until all the steps' calls are there: the last step lets them all go.
        publish_project(service, [gathering_tool("held", backend, "held", STEPS_AT_ONCE, wait=HELD_SECONDS)])
        chat = Conversation(service, service.session_token())
        turn = chat.turn()
        path = f"/v1/conversations/{chat.id}/turns/{turn}/steps"
        body = {"calls": [{"id": "1", "name": "held", "arguments": {}}]}
        waiting = STEPS_AT_ONCE - 1
        steps = [gevent.spawn(service.as_session, "POST", path, chat.token, json=body) for _ in range(waiting)]
        wait_for(lambda: calls_at_the_mock(backend, "held") == waiting, HELD_SECONDS)
        alive = requests.get(service.url + "/healthz", timeout=5)
        still_waiting = sum(not s.ready() for s in steps)
        last = chat.step(turn, ("held", {}))
        gevent.joinall(steps, timeout=30)

    assert alive.status_code == 200 and still_waiting == waiting  # liveness did not queue behind the steps
    answers = [s.value for s in steps]
    assert [a.status_code for a in answers] == [200] * waiting, {a.status_code: a.text for a in answers}
    results = [a.json()["results"][0] for a in answers] + last
    assert {gathered(r) for r in results} == {(True, STEPS_AT_ONCE)}  # every step's call was waiting at once


def test_past_its_share_an_organization_gets_429_while_another_runs(tmp_path):
    share = 3
    with live_service(tmp_path, max_calls_in_flight_per_org=share) as service:
        globex = _second_organization(service, "globex")
        with mock_backend([service.issuer, globex.issuer]) as backend:
            chats = {}
            for org in (service, globex):
                # Each organization's calls wait at the mock until both organizations' full shares are there.
                publish_project(org, [gathering_tool("held", backend, "both", 2 * share, wait=HELD_SECONDS),
                                      tool("quick", backend + "/tools/quick/echo")])
                chat = Conversation(org, org.session_token())
                chats[org.org] = (chat, chat.turn())
            (acme, acme_turn), (other, other_turn) = chats["acme"], chats["globex"]
            busy = gevent.spawn(acme.step, acme_turn, *[("held", {})] * share)
            wait_for(lambda: calls_at_the_mock(backend, "held") == share, HELD_SECONDS)  # acme's share is in flight
            over = service.as_session("POST", f"/v1/conversations/{acme.id}/turns/{acme_turn}/steps", acme.token,
                                      json={"calls": [{"id": "x", "name": "quick", "arguments": {}}]})
            meanwhile = other.step(other_turn, *[("held", {})] * share)
            busy.get(timeout=10)
            after = acme.step(acme_turn, ("quick", {}))

    assert over.status_code == 429 and over.headers["Retry-After"] == "2"
    assert over.json()["code"] == "too-many-calls" and f"{share} tool calls in flight" in over.json()["message"]
    # Another organization's share ran in full while acme's was taken: all of both were at the mock at once.
    assert [gathered(r) for r in busy.value + meanwhile] == [(True, 2 * share)] * (2 * share)
    assert json.loads(after[0]["output"])["path"] == "/tools/quick/echo"  # given back when the calls end


def _second_organization(service, slug):
    """The same live service, seen as another organization with its own keys."""
    keys = make_org(service.config, slug)
    return replace(service, org=slug, admin_key=keys["admin"], agent_key=keys["agent"], backend_key=keys["backend"])


def test_hostile_response_heads_fail_within_the_deadline_while_healthz_answers(tmp_path):
    from tests.dispatch.endpoint import Endpoint

    hostile = Endpoint()
    try:
        with live_service(tmp_path) as service:
            publish_project(service, [tool("huge_header", hostile.url(f"/long-header/{16 * 1024 * 1024}")),
                                      tool("endless", hostile.url("/endless-headers"))])
            chat = Conversation(service, service.session_token())
            step = gevent.spawn(chat.step, chat.turn(), ("huge_header", {}), ("endless", {}))
            health = []
            while not step.ready() and len(health) < 500:
                started = time.monotonic()
                assert requests.get(service.url + "/healthz", timeout=5).status_code == 200
                health.append(time.monotonic() - started)
                gevent.sleep(0.01)
            results = step.get(timeout=15)
    finally:
        hostile.stop()

    assert [r["error"] for r in results] == [{"status": "error", "kind": "transport-error"}] * 2
    assert max(r["latency_ms"] for r in results) < 10_000  # ended by the head's cap, not the 10 s deadline
    assert health and max(health) < 0.2  # the worker stayed responsive throughout


def test_a_checkout_waiter_that_is_interrupted_leaks_no_checkout():
    from playhouse.pool import MaxConnectionsExceeded

    from service.pool import Checkouts

    checkouts = Checkouts(1)
    checkouts.take(0)
    interrupted = gevent.spawn(checkouts.take, 5)
    gevent.sleep(0.01)
    interrupted.kill()  # killed while waiting in line
    refused = gevent.spawn(checkouts.take, 0.05)
    gevent.joinall([refused])
    checkouts.give_back()
    checkouts.take(0)  # the one checkout is free again: nobody dead holds it
    assert isinstance(refused.exception, MaxConnectionsExceeded) and checkouts.free == 0
