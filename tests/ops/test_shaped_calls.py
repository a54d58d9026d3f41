"""Shaped calls end to end (issue 39), on both engines: the live service, the real mock backend, one step. What reaches
the model, what the call log keeps (the shaped size, the raw size beside it), its kind filter and the metrics."""
import json

from prometheus_client.parser import text_string_to_metric_families

from tests.support.definitions import tool
from tests.support.live import converse, live_service, mock_backend, publish_project

SHAPE = "orders[*].{id: id, status: status}"
WORDS = {"refused:404": "There is no such order.", "empty": "There are no orders yet."}


def url(backend: str, name: str, behaviour: str) -> str:
    return f"{backend}/tools/{name}/{behaviour}"


def test_shaped_calls_reach_the_model_and_the_call_log_keeps_both_sizes(tmp_path, database_url):
    with live_service(tmp_path, database_url=database_url) as service, mock_backend([service.issuer]) as backend:
        publish_project(service, [
            tool("shaped", url(backend, "shaped", "orders/100"), response_shape=SHAPE),
            tool("plain", url(backend, "plain", "orders/100")),
            tool("fields", url(backend, "fields", "problem/404"), error_fields=["code", "message"],
                 outcome_messages=WORDS),
            tool("empty", url(backend, "empty", "status/204"), outcome_messages=WORDS),
            tool("text", url(backend, "text", "chars/40"), response_shape=SHAPE),
            tool("small", url(backend, "small", "orders/2")),
        ])
        conversation, _, step = converse(service, service.session_token("alice"),
                                         *[(name, {}) for name in ("shaped", "plain", "fields", "empty", "text",
                                                                   "small")])
        results = {r["name"]: {k: v for k, v in r.items() if k in ("output", "error")} for r in step.json()["results"]}
        wanted = [{"id": f"o-{i}", "status": "shipped" if i % 2 else "open"} for i in range(100)]
        assert results["shaped"] == {"output": json.dumps(wanted, separators=(",", ":"))}
        assert results["plain"] == {"error": {"status": "error", "kind": "response-too-big", "httpCode": 200}}
        assert results["fields"] == {"error": {
            "status": "error", "kind": "refused", "httpCode": 404, "message": "There is no such order.",
            "details": {"code": "no_such_order", "message": "Order o-404 does not exist."}}}
        assert "Traceback" not in step.text
        assert results["empty"] == {"output": "There are no orders yet."}
        assert results["text"] == {"error": {"status": "error", "kind": "shape-failed", "httpCode": 200}}
        assert "output" in results["small"] and json.loads(results["small"]["output"])["orders"][1]["id"] == "o-1"

        calls = {c["tool"]: c for c in service.api("GET", f"/v1/calls?conversation={conversation}").json()["calls"]}
        shaped_size = len(results["shaped"]["output"])
        assert (calls["shaped"]["size"], calls["shaped"]["raw_size"]) == (shaped_size, calls["shaped"]["raw_size"])
        assert calls["shaped"]["raw_size"] > 40_000
        assert (calls["plain"]["size"], calls["plain"]["raw_size"]) == ("over the cap", None)
        assert (calls["text"]["kind"], calls["text"]["status"], calls["text"]["raw_size"]) == ("shape-failed", 200, 40)
        assert (calls["small"]["size"], calls["small"]["raw_size"]) == (len(results["small"]["output"]), None)

        failed = service.api("GET", f"/v1/calls?conversation={conversation}&kind=shape-failed").json()["calls"]
        assert [c["tool"] for c in failed] == ["text"]
        metrics = service.api("GET", "/metrics").text
        kinds = {s.labels.get("kind") for f in text_string_to_metric_families(metrics) for s in f.samples}
        assert "shape-failed" in kinds
