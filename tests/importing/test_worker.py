"""A document is read off the gevent hub: the worker's other greenlets keep running while it is parsed."""
import gevent
import yaml
from gevent import monkey

from service.importing import plan
from tests.support.live import live_service

#: Enough for every part of reading and mapping to run (its anchor sends it through the node check as well); a larger
#: one would only take longer, as every document goes the same way.
OPERATIONS = 20
#: A lock of the operating system's, not gevent's: a thread waiting on it waits for real, whatever the hub does.
os_lock = monkey.get_original("_thread", "allocate_lock")
#: How long the read waits for a greenlet to run meanwhile. Only a read on the hub itself waits it out: no greenlet
#: can run there until the read returns.
HUB_WAIT_SECONDS = 5


def openapi_yaml() -> str:
    paths = {f"/r{i}/items": {"get": {"operationId": f"list_r{i}", "summary": f"List items of resource {i}",
                                      "parameters": [{"name": "q", "in": "query", "schema": {"type": "string"}}],
                                      "responses": {"200": {"description": "Items"}}}}
             for i in range(OPERATIONS)}
    text = yaml.safe_dump({"openapi": "3.0.3", "info": {"title": "worker", "version": "1"},
                           "servers": [{"url": "https://api.example.com"}], "paths": paths})
    return text + "x-shared: &shared {a: 1}\nx-again: *shared\n"


def test_other_greenlets_run_while_a_document_is_read_and_mapped(tmp_path, monkeypatch):
    hub = gevent.get_hub()
    ran_meanwhile: list[bool] = []
    read_and_map = plan._read_and_map

    def observed(*args):
        # The read asks the hub to start a greenlet, and waits until that greenlet has run.
        greenlet_ran = os_lock()
        greenlet_ran.acquire()
        hub.loop.run_callback_threadsafe(lambda: gevent.spawn(greenlet_ran.release))
        ran_meanwhile.append(greenlet_ran.acquire(timeout=HUB_WAIT_SECONDS))
        return read_and_map(*args)

    monkeypatch.setattr(plan, "_read_and_map", observed)
    with live_service(tmp_path) as service:
        response = service.api("POST", "/v1/tools/import", json={"document": openapi_yaml()})
    assert response.status_code == 200, response.text[:300]
    assert len(response.json()["operations"]) == OPERATIONS
    assert ran_meanwhile == [True]
