"""A large document is read off the gevent hub: the worker's other greenlets keep running while it is parsed."""
import gevent
import yaml

from service.importing import plan
from tests.helpers import live_service

#: Stays under the 1 MiB body limit; its anchor sends it through the node check as well.
OPERATIONS = 700


def big_yaml() -> str:
    paths = {f"/r{i}/items": {"get": {"operationId": f"list_r{i}", "summary": f"List items of resource {i}",
                                      "parameters": [{"name": "q", "in": "query", "schema": {"type": "string"}}],
                                      "responses": {"200": {"description": "Items"}}}}
             for i in range(OPERATIONS)}
    text = yaml.safe_dump({"openapi": "3.0.3", "info": {"title": "big", "version": "1"},
                           "servers": [{"url": "https://api.example.com"}], "paths": paths})
    return text + "x-shared: &shared {a: 1}\nx-again: *shared\n"


def test_other_greenlets_run_while_a_document_is_read_and_mapped(tmp_path, monkeypatch):
    events: list[str] = []
    read_and_map = plan._read_and_map

    def observed(*args):
        events.append("start")
        try:
            return read_and_map(*args)
        finally:
            events.append("end")

    def ticker():
        while True:
            events.append("tick")
            gevent.sleep(0.005)

    monkeypatch.setattr(plan, "_read_and_map", observed)
    with live_service(tmp_path) as service:
        ticking = gevent.spawn(ticker)
        try:
            response = service.api("POST", "/v1/tools/import", json={"document": big_yaml()})
        finally:
            ticking.kill()
    assert response.status_code == 200, response.text[:300]
    assert len(response.json()["operations"]) == OPERATIONS
    during = events[events.index("start") + 1:events.index("end")]
    assert during.count("tick") > 0  # on the hub itself, nothing else would run until the parse ended
