"""Steps wait on slow tools without holding a database connection, and each organization keeps to its share."""
import time
from dataclasses import replace

import gevent
import requests

from tests.helpers import Conversation, live_service, make_org, mock_backend, publish_project, tool

WAITING_STEPS = 100
POOL = 4
SLEPT = '{"slept":1.0}\n'  # the mock backend's answer after its one-second delay, as it came


def test_a_hundred_waiting_steps_share_a_pool_of_four_connections(tmp_path, database_url):
    with live_service(tmp_path, database_url, database_pool_size=POOL) as service, \
            mock_backend([service.issuer]) as backend:
        publish_project(service, [tool("slow", backend + "/tools/slow/delay/1")])
        chat = Conversation(service, service.session_token())
        turn = chat.turn()
        path = f"/v1/conversations/{chat.id}/turns/{turn}/steps"
        body = {"calls": [{"id": "1", "name": "slow", "arguments": {}}]}
        steps = [gevent.spawn(service.as_session, "POST", path, chat.token, json=body) for _ in range(WAITING_STEPS)]
        gevent.sleep(0.3)  # every step is now waiting on its one-second call
        alive = requests.get(service.url + "/healthz", timeout=5)
        still_waiting = sum(not s.ready() for s in steps)
        gevent.joinall(steps, timeout=30)

    assert alive.status_code == 200 and still_waiting == WAITING_STEPS  # liveness did not queue behind the steps
    answers = [s.value for s in steps]
    assert [a.status_code for a in answers] == [200] * WAITING_STEPS, {a.status_code: a.text for a in answers}
    assert {a.json()["results"][0]["output"] for a in answers} == {SLEPT}


def test_past_its_share_an_organization_gets_429_while_another_runs(tmp_path):
    share = 3
    with live_service(tmp_path, max_calls_in_flight_per_org=share) as service:
        globex = _second_organization(service, "globex")
        with mock_backend([service.issuer, globex.issuer]) as backend:
            chats = {}
            for org in (service, globex):
                publish_project(org, [tool("slow", backend + "/tools/slow/delay/1")])
                chat = Conversation(org, org.session_token())
                chats[org.org] = (chat, chat.turn())
            (acme, acme_turn), (other, other_turn) = chats["acme"], chats["globex"]
            busy = gevent.spawn(acme.step, acme_turn, *[("slow", {})] * share)
            gevent.sleep(0.3)  # acme's share is now taken by calls in flight
            over = service.as_session("POST", f"/v1/conversations/{acme.id}/turns/{acme_turn}/steps", acme.token,
                                      json={"calls": [{"id": "x", "name": "slow", "arguments": {}}]})
            meanwhile = gevent.spawn(other.step, other_turn, *[("slow", {})] * share)
            gevent.joinall([busy, meanwhile], timeout=10, raise_error=True)
            after = acme.step(acme_turn, ("slow", {}))

    assert over.status_code == 429 and over.headers["Retry-After"] == "2"
    assert over.json()["code"] == "too-many-calls" and f"{share} tool calls in flight" in over.json()["message"]
    assert [r["output"] for r in busy.value] == [SLEPT] * share
    assert [r["output"] for r in meanwhile.value] == [SLEPT] * share  # another organization's share
    assert after[0]["output"] == SLEPT  # given back when the calls end


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
