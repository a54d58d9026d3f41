"""The work gate: a few requests work at once, a burst's arrivals let a probe in, the probes never queue, waits on the network hold no place, and a
request that cannot get a place in time is refused 503 `busy` on every edge."""
import time

import gevent
import gevent.socket
import greenlet
import pytest
import requests

from service import gate, scheduling
from service.errors import ServiceError
from service.gate import WorkGate
from service.http.context import WORK_GATE_KEY
from tests.support.databases import app_for
from tests.support.definitions import gathered, gathering_tool
from tests.support.live import Conversation, live_service, mock_backend, publish_project

BUSY = "The service is busy; try again shortly."
#: Steps, each with one call to a tool that answers only once every one of them is at the endpoint at once.
GATHERED_STEPS = 20


def test_a_request_takes_one_place_and_gives_it_back_while_it_waits_on_the_network():
    work = WorkGate(2, wait_seconds=0.01)
    gate.enter(work)
    gate.enter(work)  # the same request again: still one place
    assert work.free == 1
    with gate.stepped_out():
        assert work.free == 2
    assert work.free == 1
    gate.leave()
    gate.leave()  # nothing held any more: nothing given back twice
    assert work.free == 2


#: Requests woken together in the test below, and the CPU each works without yielding (as on SQLite).
ARRIVALS, WORK_SECONDS = 40, 0.002


def test_arrivals_woken_together_by_their_sockets_let_a_probe_in_before_they_have_all_worked():
    # The probe's socket is written first: of the greenlets the loop wakes in one pass, it runs the last woken
    # first, so without the gate's yield the probe would wait for all forty arrivals' work.
    work = WorkGate(ARRIVALS, wait_seconds=1)
    order: list[int | str] = []
    pairs = [gevent.socket.socketpair() for _ in range(ARRIVALS + 1)]

    def arrival(index, sock):
        sock.recv(1)
        gate.enter(work)
        try:
            end = time.perf_counter() + WORK_SECONDS
            while time.perf_counter() < end:
                pass
            order.append(index)
        finally:
            gate.leave()

    def probe(sock):
        sock.recv(1)
        order.append("probe")

    greenlets = [gevent.spawn(probe, pairs[0][0])] + [gevent.spawn(arrival, i, a) for i, (a, _) in
                                                      enumerate(pairs[1:])]
    gevent.sleep(0.01)  # each greenlet waits on its socket
    for _, writer in pairs:
        writer.send(b"x")
    gevent.joinall(greenlets, timeout=5)
    for a, b in pairs:
        a.close()
        b.close()
    assert len(order) == ARRIVALS + 1
    assert order.index("probe") == 0


def test_without_a_place_in_time_a_request_is_refused_busy_with_retry_after():
    work = WorkGate(1, wait_seconds=0.01)
    holder = gevent.spawn(gate.enter, work)
    holder.join()
    assert work.free == 0

    with pytest.raises(ServiceError) as refused:
        gate.enter(work)
    assert (refused.value.status, refused.value.code, refused.value.retry_after) == (503, "busy", 1)
    assert refused.value.message == "The service is busy; try again shortly."


def test_outside_any_request_stepping_out_does_nothing():
    with gate.stepped_out():
        pass
    gate.leave()


def test_steps_waiting_on_their_calls_hold_no_place_at_a_gate_of_one(tmp_path):
    # Every step's call waits at the endpoint until all the others have arrived: they can only meet if no step
    # keeps the one place while its call is in flight.
    with live_service(tmp_path, max_requests_at_work=1) as service, mock_backend([service.issuer]) as backend:
        publish_project(service, [gathering_tool("gathered", backend, "steps", GATHERED_STEPS)])
        chat = Conversation(service, service.session_token())
        turn = chat.turn()
        steps = [gevent.spawn(chat.step, turn, ("gathered", {})) for _ in range(GATHERED_STEPS)]
        gevent.joinall(steps, timeout=30, raise_error=True)

    assert [gathered(step.value[0]) for step in steps] == [(True, GATHERED_STEPS)] * GATHERED_STEPS


@pytest.fixture
def full_gate(tmp_path):
    """A live service whose one place at the work gate is taken (as by a request at work) for the test's length."""
    with live_service(tmp_path, max_requests_at_work=1, work_wait_seconds=0.05) as service:
        work = app_for(service.config).extensions[WORK_GATE_KEY]
        assert work.take()
        try:
            yield service
        finally:
            work.give_back()


def test_past_the_gate_each_edge_answers_503_busy_and_the_probes_still_answer(full_gate):
    service = full_gate
    api = service.api("GET", "/v1/tools")
    minted = service.api("POST", "/v1/session-tokens", service.backend_key, json={"subject": "alice"})
    page = requests.get(service.url + "/tools", timeout=5)
    mcp = service.api("POST", "/mcp", service.agent_key, json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
                      headers={"Accept": "application/json, text/event-stream"})

    for refused in (api, minted):
        assert (refused.status_code, refused.headers.get("Retry-After")) == (503, "1")
        assert refused.json() == {"code": "busy", "message": BUSY,
                                  "errors": [{"field": "", "rule": "busy", "message": BUSY}]}
    assert (page.status_code, page.headers.get("Retry-After")) == (503, "1")
    assert "text/html" in page.headers["Content-Type"] and "The service is busy" in page.text
    assert (mcp.status_code, mcp.headers.get("Retry-After")) == (503, "1")
    assert mcp.json()["error"]["data"]["code"] == "busy"
    for probe in ("/healthz", "/readyz", "/metrics"):
        assert requests.get(service.url + probe, timeout=5).status_code == 200, probe


def test_once_a_place_is_free_the_same_request_is_answered(full_gate):
    service = full_gate
    assert service.api("GET", "/v1/tools").status_code == 503
    work = app_for(service.config).extensions[WORK_GATE_KEY]
    work.give_back()
    try:
        assert service.api("GET", "/v1/tools").status_code == 200
    finally:
        assert work.take()  # the fixture gives one back at its end


def test_a_request_yields_to_greenlets_ready_to_run_and_skips_the_yield_when_none_is():
    def in_a_thread_of_its_own():  # so its hub's loop holds only what this does
        switches, ran = [], []
        previous = greenlet.settrace(lambda event, args: switches.append(event))
        try:
            scheduling.yield_to_ready()  # nothing else ready: no switch to the hub and back
            alone = list(switches)
            gevent.spawn(ran.append, "the other")
            scheduling.yield_to_ready()
        finally:
            greenlet.settrace(previous)
        return alone, ran

    alone, ran = gevent.get_hub().threadpool.apply(in_a_thread_of_its_own)
    assert alone == []
    assert ran == ["the other"]  # it ran before this greenlet went on
