"""Whole turns that pause for the person's approval and go on once it is decided (issue 19), through each adapter,
against the scripted model and the mock backend: the endpoint receives nothing until the approval, then exactly the
held call once; the model is handed the decided result in place of the pending one, never a call without its
result; and a message or a continue at the wrong moment is refused, changing nothing."""
from __future__ import annotations

import json
import time
from itertools import takewhile

import jwt
import requests

from service.conversations.turns import TurnLimits, stop_message
from service.database import make_database
from tests.support.definitions import tool
from tests.turns.conftest import TurnConversation, turn_platform
from tests.turns.test_turns import results_given

ITEM = {"name": "item", "type": "string", "location": "body"}
ORDER = {"id": "p", "name": "place_order", "arguments": {"item": "milk"}}
LOOK = {"id": "l", "name": "look", "arguments": {}}
DECLINED = {"status": "error", "kind": "declined"}


def consequential_tools(backend: str) -> list[dict]:
    """place_order requires approval (it echoes what it was sent); look is an ordinary echo."""
    return [tool("place_order", f"{backend}/tools/place_order/echo", method="POST", parameters=[ITEM],
                 requires_approval=True),
            tool("look", f"{backend}/tools/look/echo")]


def received(platform, name: str) -> list[dict]:
    return requests.get(f"{platform.backend}/_calls", params={"tool": name}, timeout=5).json()["calls"]


def pairs_in(body: dict, provider: str) -> list[tuple[str, int]]:
    """Each tool call of a model request, with how many results the messages right after it hand back for it: both
    APIs refuse anything but exactly one."""
    messages, pairs = body["messages"], []
    for index, message in enumerate(messages):
        if message["role"] != "assistant":
            continue
        if provider == "anthropic":
            uses = [b["id"] for b in message["content"] if b["type"] == "tool_use"]
            after = messages[index + 1]["content"] if index + 1 < len(messages) else []
            answered = [b["tool_use_id"] for b in after if b["type"] == "tool_result"]
        else:
            uses = [c["id"] for c in message.get("tool_calls") or []]
            answered = [m["tool_call_id"] for m in takewhile(lambda m: m["role"] == "tool", messages[index + 1:])]
        pairs += [(use, answered.count(use)) for use in uses]
    return pairs


def open_chat(platform, provider: str, subject: str | None = None) -> TurnConversation:
    """A conversation with place_order and look published."""
    platform.publish(consequential_tools(platform.backend))
    return platform.conversation(provider, subject=subject)


def paused_turn(chat: TurnConversation) -> dict:
    """Send a message whose step holds place_order and runs look; the paused turn's result."""
    result = chat.send("Order milk, and look")
    assert result["reply"] is None
    assert result["stopped"] == {"reason": "awaiting-approval",
                                 "message": stop_message("awaiting-approval", TurnLimits(8, 60))}
    return result


def test_a_turn_pauses_until_the_call_is_approved_then_the_model_is_handed_its_result(platform, provider):
    model = platform.models[provider]
    model.script([[{"calls": [ORDER, LOOK]}, {"text": "Ordered: {results}"}], [{"text": "You are welcome."}]])
    chat = open_chat(platform, provider, "alice")

    paused = paused_turn(chat)

    [step] = paused["steps"]
    order, look = step["results"]
    assert set(order) == {"id", "name", "approval"} and order["approval"]["status"] == "pending"
    assert json.loads(look["output"])["method"] == "GET"  # the step's ordinary call ran, and its result is kept
    [approval] = paused["approvals"]
    assert approval == chat.approvals()[0]  # as the approvals route lists it
    assert (approval["id"], approval["status"], approval["tool"], approval["arguments"], approval["turn"]) == (
        order["approval"]["id"], "pending", "place_order", {"item": "milk"}, paused["turn"])
    assert approval["expires_at"] == order["approval"]["expires_at"] and paused["decided"] == []
    assert received(platform, "place_order") == [] and len(received(platform, "look")) == 1
    history = chat.history()
    assert [m["role"] for m in history] == ["user", "assistant", "tool", "platform"]
    assert history[-1]["stopped"] == paused["stopped"] and history[-1]["approvals"] == [approval["id"]]
    assert len(model.bodies()) == 1

    decided = chat.decide(approval["id"], "approve")
    [sent] = received(platform, "place_order")
    assert json.loads(decided["result"]["output"])["json"] == {"item": "milk"}

    going_on = chat.go_on()

    assert going_on["turn"] == paused["turn"] and going_on["stopped"] is None and going_on["steps"] == []
    assert going_on["reply"].startswith("Ordered: ")
    assert going_on["decided"] == [{"approval": {**approval, "status": "approved",
                                                 "decided_at": decided["approval"]["decided_at"]},
                                    "result": decided["result"]}]
    # The endpoint received exactly the held call, once, its assertion carrying the approval.
    assert received(platform, "place_order") == [sent]
    claims = jwt.decode(sent["authorization"].removeprefix("Bearer "), options={"verify_signature": False})
    assert (claims["approval"], claims["turn"], claims["sub"]) == (approval["id"], paused["turn"], "alice")
    # The model was handed the real result in place of the pending one, beside look's, each call with one result.
    body = model.bodies()[-1]
    given = results_given(body, provider)
    assert given == {"p": decided["result"]["output"], "l": look["output"]}
    assert pairs_in(body, provider) == [("p", 1), ("l", 1)] and "pending" not in json.dumps(body)
    assert going_on["reply"] == "Ordered: " + "\n".join([decided["result"]["output"], look["output"]])
    # The history shows what the model was handed, and the conversation goes on from it.
    history = chat.history()
    assert [m["role"] for m in history] == ["user", "assistant", "tool", "platform", "tool", "assistant"]
    assert history[4]["results"] == [decided["result"]] and history[4]["approvals"] == [approval["id"]]
    assert {m["turn"] for m in history} == {paused["turn"]}
    assert chat.go_on(expect=409)["code"] == "nothing-to-continue"
    assert chat.send("Thanks")["reply"] == "You are welcome."
    later = model.bodies()[-1]
    assert "pending" not in json.dumps(later) and pairs_in(later, provider) == [("p", 1), ("l", 1)]
    assert len(received(platform, "place_order")) == 1


def test_a_declined_call_is_never_sent_and_the_model_is_told_it_was_declined(platform, provider):
    model = platform.models[provider]
    model.script([[{"calls": [ORDER, LOOK]}, {"text": "Not ordered: {results}"}]])
    chat = open_chat(platform, provider)
    [approval] = paused_turn(chat)["approvals"]

    chat.decide(approval["id"], "decline")
    refused = chat.send("Something else", expect=409)  # decided, but the turn has not gone on yet
    assert refused["code"] == "turn-awaits-continue" and "without text" in refused["message"]
    events = chat.stream(None)

    assert [kind for kind, _ in events] == ["turn", "call", "reply"]
    (_, started), (_, call), (_, going_on) = events
    assert call == {"step": 0, "id": "p", "name": "place_order", "error": DECLINED, "latency_ms": 0}
    assert going_on["turn"] == started["turn"] and going_on["reply"].startswith("Not ordered: ")
    [decided] = going_on["decided"]
    assert decided["approval"]["status"] == "declined" and decided["result"]["error"] == DECLINED
    assert json.loads(results_given(model.bodies()[-1], provider)["p"]) == DECLINED
    assert received(platform, "place_order") == []


def test_a_message_or_a_continue_while_an_approval_is_undecided_is_refused_and_changes_nothing(platform, provider):
    model = platform.models[provider]
    model.script([[{"calls": [ORDER, LOOK]}, {"text": "Done."}]])
    chat = open_chat(platform, provider)
    [approval] = paused_turn(chat)["approvals"]
    history, asked = chat.history(), len(model.bodies())

    for refused in (chat.send("Hello?", expect=409), chat.go_on(expect=409),
                    chat.send_body({"stream": True}, expect=409)):
        assert refused["code"] == "approvals-pending"
        assert refused["errors"] == [{"field": f"approvals/{approval['id']}", "rule": "approval-pending",
                                      "message": "This call awaits the person's decision."}]

    assert chat.history() == history and len(model.bodies()) == asked
    assert received(platform, "place_order") == [] and chat.approvals()[0]["status"] == "pending"
    chat.decide(approval["id"], "approve")
    assert chat.go_on()["reply"] == "Done."  # the refusals left the turn as it was


def test_an_expired_approval_is_never_sent_and_is_handed_over_as_declined(tmp_path):
    # An approval lifetime of zero: every approval has expired by the time anyone decides it, with no wait.
    with turn_platform(tmp_path, providers=("openai",), approval_lifetime_seconds=0) as platform:
        platform.models["openai"].script([[{"calls": [ORDER, LOOK]}, {"text": "It expired: {results}"}]])
        chat = open_chat(platform, "openai", "eve")
        paused = paused_turn(chat)
        [approval], look = paused["approvals"], paused["steps"][0]["results"][1]
        assert approval["status"] == "expired"
        assert chat.decide(approval["id"], "approve", expect=409)["code"] == "approval-expired"
        assert chat.send("Hello?", expect=409)["code"] == "turn-awaits-continue"  # expiry decided it

        going_on = chat.go_on()

        [decided] = going_on["decided"]
        assert decided["approval"]["status"] == "expired" and decided["result"]["error"] == DECLINED
        assert going_on["reply"] == "It expired: " + "\n".join([json.dumps(DECLINED), look["output"]])
        assert received(platform, "place_order") == []
        service = platform.services["openai"]
        [logged] = service.api("GET", "/v1/calls", params={"tool": "place_order", "subject": "eve"}).json()["calls"]
        assert (logged["kind"], logged["approval"], logged["jti"]) == ("declined", approval["id"], None)


def test_the_paused_step_counts_against_the_turns_step_limit(tmp_path):
    with turn_platform(tmp_path, providers=("anthropic",), max_steps_per_turn=1) as platform:
        platform.models["anthropic"].script([[{"calls": [ORDER, LOOK]}, {"calls": [LOOK], "repeat": True}]])
        chat = open_chat(platform, "anthropic")
        [approval] = paused_turn(chat)["approvals"]
        chat.decide(approval["id"], "decline")

        going_on = chat.go_on()

        assert going_on["stopped"]["reason"] == "step-limit" and going_on["steps"] == []
        assert len(received(platform, "look")) == 1  # the second step's call never ran


def test_another_instance_continues_the_turn_from_what_was_stored(tmp_path, database_url):
    # Two services on one database, each with its own model: the turn pauses on one, goes on through the other, so
    # nothing the first kept in memory is needed (a restart between the decision and the continue loses nothing).
    with turn_platform(tmp_path, database_url=database_url) as platform:
        platform.models["openai"].script([[{"calls": [ORDER, LOOK]}]])
        # The scripted model follows a turn from the person's message; the first is said through the other instance.
        platform.models["anthropic"].script([[{"text": "Hello."}, {"text": "Placed: {results}"}]])
        chat = open_chat(platform, "openai", "olga")
        other = platform.services["anthropic"]
        elsewhere = TurnConversation.joined(other, other.session_token("olga"), chat.id)
        assert elsewhere.send("Hi")["reply"] == "Hello."
        [approval] = paused_turn(chat)["approvals"]
        decided = chat.decide(approval["id"], "approve")

        going_on = elsewhere.go_on()

        assert going_on["reply"].startswith("Placed: " + decided["result"]["output"])
        body = platform.models["anthropic"].bodies()[-1]
        assert pairs_in(body, "anthropic") == [("p", 1), ("l", 1)]
        assert results_given(body, "anthropic")["p"] == decided["result"]["output"]
        assert len(received(platform, "place_order")) == 1


def forget_result(platform, approval: str, decided_at: float) -> None:
    """As if the process sending an approved call had died before keeping its answer, at `decided_at`."""
    database = make_database(platform.services["openai"].config.database_url, pooled=False)
    with database.connection_context():
        database.execute_sql(f"UPDATE approval SET result = NULL, decided_at = {database.param} "
                             f"WHERE id = {database.param}", (decided_at, approval))


def test_an_approved_call_whose_answer_was_lost_is_never_sent_again(tmp_path):
    with turn_platform(tmp_path, providers=("openai",)) as platform:
        platform.models["openai"].script([[{"calls": [ORDER, LOOK]}, {"text": "Lost: {results}"}]])
        chat = open_chat(platform, "openai")
        [approval] = paused_turn(chat)["approvals"]
        chat.decide(approval["id"], "approve")

        forget_result(platform, approval["id"], time.time())  # it may still be on its way: wait for it
        refused = chat.go_on(expect=409)
        assert refused["code"] == "approvals-pending" and [e["rule"] for e in refused["errors"]] == ["approval-sending"]
        forget_result(platform, approval["id"], time.time() - 3600)  # long past any call's deadline
        going_on = chat.go_on()

        [decided] = going_on["decided"]
        assert decided["result"] == {"id": "p", "name": "place_order", "error": {"status": "error",
                                                                                "kind": "timed-out"}}
        assert json.loads(results_given(platform.models["openai"].bodies()[-1], "openai")["p"])["kind"] == "timed-out"
        assert len(received(platform, "place_order")) == 1  # sent once, never again
