"""The call log end to end: a call of each kind, its fields, and no body or token in the database or the logs."""
import base64
import json
import time

from peewee import OperationalError
from prometheus_client.parser import text_string_to_metric_families

from service.conversations import records
from service.limits import CALL_DEADLINE_SECONDS
from tests.ops.endpoint import MARKER, OK_BODY, PLAIN_BODY, closed_port_url, endpoint
from tests.support.constants import SUBJECT_IN_PATH
from tests.support.definitions import tool
from tests.support.live import Conversation, converse, live_service, publish_project
from tests.support.logs import captured_logs, log_lines


def claims(authorization):
    payload = authorization.split(" ", 1)[1].split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


#: The call deadline these tests run with, so a timed-out call costs half a second (the real ten:
#: test_failure_kinds); the endpoint's other routes answer in milliseconds.
DEADLINE = 0.5


def test_a_call_of_each_kind_is_logged_with_its_fields_and_no_body_or_token_is_kept(tmp_path):
    with live_service(tmp_path, call_deadline_seconds=DEADLINE) as service, endpoint() as tenant, captured_logs() as logged:
        publish_project(service, [
            tool("start_profile", tenant.url + "/plain/{subject}", scope="per_user", runs_at_session_start=True,
                 parameters=[SUBJECT_IN_PATH]),
            tool("start_refused", tenant.url + "/refused", runs_at_session_start=True),
            tool("ok", tenant.url + "/ok"), tool("refused", tenant.url + "/refused"),
            tool("nothing", tenant.url + "/nothing"), tool("big", tenant.url + "/big"),
            tool("slow", tenant.url + "/slow"), tool("gone", closed_port_url()),
            tool("typed", tenant.url + "/ok", parameters=[{"name": "limit", "type": "number", "location": "query"}]),
        ])
        token = service.session_token("alice")
        started = time.time()
        # One step carries every kind, so the deadline is waited on once.
        conversation, turn, step = converse(service, token, ("ok", {}), ("refused", {}), ("nothing", {}),
                                            ("big", {}), ("slow", {}), ("gone", {}), ("made_up", {}),
                                            ("typed", {"limit": "ten"}))
        assert MARKER in step.text  # the successful body did reach the model
        response = service.api("GET", f"/v1/calls?conversation={conversation}")
        assert response.status_code == 200, response.text
        calls = {c["tool"]: c for c in response.json()["calls"]}
        assert response.json()["next"] is None

        expected = {  # tool: (kind, status, size, session start)
            "start_profile": ("ok", 200, len(PLAIN_BODY), True), "start_refused": ("refused", 500, None, True),
            "ok": ("ok", 200, len(OK_BODY), False), "refused": ("refused", 500, None, False),
            "nothing": ("returned-nothing", 404, None, False), "big": ("response-too-big", 200, "over the cap", False),
            "slow": ("timed-out", None, None, False), "gone": ("transport-error", None, None, False),
            "made_up": ("unknown-tool", None, None, False), "typed": ("invalid-arguments", None, None, False),
        }
        assert {name: (c["kind"], c["status"], c["size"], c["session_start"]) for name, c in calls.items()} == expected
        start_turn = calls["start_profile"]["turn"]
        assert start_turn != turn  # session start has its own turn id
        for name, call in calls.items():
            assert (call["subject"], call["anonymous"], call["conversation"]) == ("alice", False, conversation)
            assert call["version"] == (None if name == "made_up" else 1)
            assert call["turn"] == (start_turn if call["session_start"] else turn)
            assert started - 1 <= call["at"] <= time.time() + 1
        assert calls["slow"]["latency_ms"] >= DEADLINE * 1000 - 100  # held to the (injected) deadline
        # A call that reached the endpoint carries the jti of the assertion it received; one that was signed but
        # found no one listening has its own; nothing was signed for a tool that does not exist or bad arguments.
        received = {claims(a)["jti"] for a in tenant.authorizations}
        reached = {c["jti"] for name, c in calls.items() if name not in ("made_up", "typed", "gone")}
        assert reached == received and len(received) == 7
        assert calls["gone"]["jti"] and calls["gone"]["jti"] not in received
        assert calls["made_up"]["jti"] is None and calls["typed"]["jti"] is None

        # Filters, each of which could fail.
        def count(query):
            return len(service.api("GET", f"/v1/calls?{query}").json()["calls"])

        assert count(f"turn={turn}") == 8
        assert count("kind=ok") == 2 and count("kind=refused") == 2 and count("tool=slow") == 1
        assert count("subject=alice") == 10 and count("subject=bob") == 0
        assert count(f"since={started - 1}&until={time.time() + 1}") == 10 and count(f"since={time.time() + 60}") == 0
        assert service.api("GET", "/v1/calls", service.agent_key).status_code == 403

        secrets = [MARKER, token, service.admin_key.split("_", 2)[2], service.backend_key.split("_", 2)[2],
                   *(a.split(" ", 1)[1] for a in tenant.authorizations)]
    stored = b"".join(path.read_bytes() for path in tmp_path.glob("live.db*"))  # the database, its WAL included
    log_text = logged.getvalue()
    # Positive controls: what the log does hold is found this way, so an absence below means something.
    assert conversation.encode() in stored and b"alice" in stored and calls["ok"]["jti"].encode() in stored
    assert turn in log_text and calls["ok"]["jti"] in log_text
    for secret in secrets:
        assert secret.encode() not in stored, secret[:20]
        assert secret not in log_text, secret[:20]

    call_lines = [line for line in log_lines(logged) if line["logger"] == "service.call"]
    assert sorted(line["tool"] for line in call_lines) == sorted(expected)
    assert {line["turn"] for line in call_lines if not line["session_start"]} == {turn}
    step_request = next(line for line in log_lines(logged) if line.get("route", "").endswith("/steps"))
    assert step_request["turn"] == turn and step_request["status"] == 200
    assert step_request["request_id"] == step.headers["X-Request-Id"]
    assert all(line["request_id"] == step_request["request_id"] for line in call_lines if line["turn"] == turn)


def test_calls_made_whose_records_cannot_be_written_are_still_logged_and_counted(tmp_path, monkeypatch):
    """The endpoint was called with signed assertions: an operator sees those calls even when the database refused
    their records and the step answered 503."""
    org = "unrecorded-org"
    with live_service(tmp_path, org=org) as service, endpoint() as tenant, captured_logs() as logged:
        publish_project(service, [tool("ok", tenant.url + "/ok")])
        chat = Conversation(service, service.session_token("alice"))
        turn = chat.turn()

        def refused(rows):
            raise OperationalError("disk I/O error")

        monkeypatch.setattr(records._writer, "_insert", refused)
        step = chat.step_response(turn, ("ok", {}), ("ok", {}))
        monkeypatch.undo()
        text = service.api("GET", "/metrics", headers={}).text
        recorded = service.api("GET", f"/v1/calls?turn={turn}").json()
    assert step.status_code == 503 and step.json()["code"] == "database-unavailable"
    assert len(tenant.authorizations) == 2 and recorded["calls"] == []  # made, and not in the call log
    lines = [line for line in log_lines(logged) if line["logger"] == "service.call" and line["turn"] == turn]
    assert sorted(line["jti"] for line in lines) == sorted(claims(a)["jti"] for a in tenant.authorizations)
    assert {line["request_id"] for line in lines} == {step.headers["X-Request-Id"]}
    assert samples(text, "toolgate_calls_total")[(("kind", "ok"), ("org", org), ("tool", "ok"))] == 2


def samples(text, name):
    """{labels tuple: value} of every sample called `name`."""
    found = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == name:
                found[tuple(sorted(sample.labels.items()))] = sample.value
    return found


def test_metrics_show_the_calls_just_made(tmp_path):
    org = "metrics-org"
    with live_service(tmp_path, org=org) as service, endpoint() as tenant:
        publish_project(service, [tool("ok", tenant.url + "/ok"), tool("refused", tenant.url + "/refused"),
                          tool("start", tenant.url + "/plain", runs_at_session_start=True)])
        converse(service, service.session_token("alice"), ("ok", {}), ("ok", {}), ("refused", {}), ("invented", {}))
        response = service.api("GET", "/metrics", headers={})
    assert response.status_code == 200
    assert response.headers["Content-Type"] == "text/plain; version=0.0.4; charset=utf-8"
    text = response.text

    calls = samples(text, "toolgate_calls_total")
    assert calls[(("kind", "ok"), ("org", org), ("tool", "ok"))] == 2
    assert calls[(("kind", "refused"), ("org", org), ("tool", "refused"))] == 1
    assert calls[(("kind", "unknown-tool"), ("org", org), ("tool", "(unknown)"))] == 1  # never the invented name
    assert calls[(("kind", "ok"), ("org", org), ("tool", "start"))] == 1
    assert not any(("tool", "invented") in labels for labels in calls)
    buckets = {dict(k)["le"]: v for k, v in samples(text, "toolgate_call_duration_seconds_bucket").items()
               if dict(k) == {**dict(k), "org": org, "tool": "ok"}}
    assert float(max((le for le in buckets if le != "+Inf"), key=float)) == CALL_DEADLINE_SECONDS
    assert buckets["+Inf"] == 2
    sizes = samples(text, "toolgate_call_response_chars_sum")
    assert sizes[(("org", org), ("tool", "ok"))] == 2 * len(OK_BODY)
    steps = samples(text, "toolgate_step_calls_sum")
    assert steps[(("org", org), ("phase", "turn"))] == 4 and steps[(("org", org), ("phase", "session-start"))] == 1
    assert samples(text, "toolgate_step_duration_seconds_count")[(("org", org), ("phase", "turn"))] == 1
    assert samples(text, "toolgate_session_start_runs_total")[(("org", org),)] == 1
    writes = samples(text, "toolgate_registry_writes_total")
    assert writes[(("action", "register"), ("org", org))] == 3
    assert writes[(("action", "project-publish"), ("org", org))] == 1
    requests_ = samples(text, "toolgate_http_requests_total")
    step_route = "/v1/conversations/<conversation_id>/turns/<turn_id>/steps"
    assert requests_[(("method", "POST"), ("route", step_route), ("status", "200"))] >= 1


def test_metrics_count_approvals_held_and_decided_and_never_name_one(tmp_path):
    org = "approvals-org"
    with live_service(tmp_path, org=org) as service, endpoint() as tenant:
        publish_project(service, [tool("order", tenant.url + "/ok", requires_approval=True)])
        token = service.session_token("alice")
        conversation = Conversation(service, token)
        held = conversation.step(conversation.turn(), ("order", {}), ("order", {}), ("order", {}))
        ids = [result["approval"]["id"] for result in held]
        for approval, decision in zip(ids, ("approve", "decline")):
            path = f"/v1/conversations/{conversation.id}/approvals/{approval}"
            assert service.as_session("POST", path, token, json={"decision": decision}).status_code == 200
        text = service.api("GET", "/metrics", headers={}).text

    counted = samples(text, "toolgate_approvals_total")
    assert {dict(labels)["status"]: value for labels, value in counted.items() if dict(labels)["org"] == org} == {
        "pending": 3, "approved": 1, "declined": 1}
    assert all(dict(labels)["tool"] == "order" for labels in counted if dict(labels)["org"] == org)
    calls = samples(text, "toolgate_calls_total")
    assert calls[(("kind", "ok"), ("org", org), ("tool", "order"))] == 1
    assert calls[(("kind", "declined"), ("org", org), ("tool", "order"))] == 1
    # Only the call that was sent took any time; a declined one was never sent.
    assert samples(text, "toolgate_call_duration_seconds_count")[(("org", org), ("tool", "order"))] == 1
    assert not any(secret in text for secret in [*ids, token])
