"""What stops a turn: the step limit, the deadline, and every way the model can fail. Each ends the turn with
a clear reason (never a 500) and keeps every message already exchanged."""
from __future__ import annotations

import json

import gevent
import pytest
import requests

from service.conversations import turns
from service.database import db
from service.limits import MAX_CALLS_PER_STEP
from service.models import Conversation, Message
from tests.support.definitions import gathered, gathering_tool
from tests.support.loopback import free_port, wait_for
from tests.turns.conftest import shop_tools, slow, turn_platform

SEARCH = {"name": "search_products", "arguments": {"q": "milk"}}
#: The turn deadline of the tests that reach it, each waiting it out once: a turn asks its model within milliseconds,
#: so its first question always comes before it.
TURN_DEADLINE = 0.3
#: A tool call that alone outlasts the turn deadline.
NAP_SECONDS = TURN_DEADLINE + 0.1
#: A tool whose call waits at the mock until another conversation's call of it comes (`release`): a turn held open
#: for as long as a test needs, and no longer.
HOLD = "hold"
#: The pause before a model is asked once more, shortened: the tests that retry count the questions, and need not
#: wait out the real pause.
RETRY_PAUSE_SECONDS = 0.01


@pytest.fixture
def short_retry_pause(monkeypatch):
    monkeypatch.setattr(turns, "MODEL_RETRY_PAUSE_SECONDS", RETRY_PAUSE_SECONDS)


def hold_tool(backend: str) -> dict:
    return gathering_tool(HOLD, backend, "hold", 2)


def held_turn(platform, chat, text: str) -> gevent.Greenlet:
    """Start a turn whose model calls `hold`; return it once that call is waiting at the mock (the turn under way)."""
    turn = gevent.spawn(chat.send, text)
    wait_for(lambda: any(call["tool"] == HOLD for call in platform.backend_calls()) or turn.ready())
    return turn


def release(platform, provider: str) -> None:
    """Another conversation's call of `hold` joins the waiting one, and both answer."""
    partner = platform.conversation(provider)
    assert gathered(partner.step(partner.turn(), (HOLD, {}))[0]) == (True, 2)


def test_the_step_limit_stops_a_looping_model(tmp_path, provider):
    with turn_platform(tmp_path, providers=(provider,), max_steps_per_turn=2) as platform:
        platform.publish(shop_tools(platform.backend))
        model = platform.models[provider]
        model.script([[{"calls": [SEARCH], "repeat": True}], [{"text": "Fresh start."}]])
        chat = platform.conversation(provider)

        result = chat.send("Loop forever")

        assert result["reply"] is None
        assert result["stopped"] == {"reason": "step-limit", "message": (
            "The model asked for tools in more than 2 steps, the most one turn may take; the turn was stopped.")}
        assert len(result["steps"]) == 2 and len(platform.backend_calls()) == 2
        assert len(model.bodies()) == 3  # asked once more after the last step, and its calls were not run
        history = chat.history()
        assert [m["role"] for m in history] == ["user", "assistant", "tool", "assistant", "tool", "platform"]
        assert history[-1]["stopped"] == result["stopped"]
        # The next turn carries on from everything already said; calls that never ran are not shown.
        assert chat.send("Hello?")["reply"] == "Fresh start."
        given = json.dumps(model.bodies()[-1]["messages"])
        assert given.count("search_products") == 2 and given.count("Oat milk") == 2


def test_the_deadline_stops_a_turn_and_the_model_is_not_asked_after_it(tmp_path, provider):
    with turn_platform(tmp_path, providers=(provider,), turn_deadline_seconds=TURN_DEADLINE) as platform:
        # The first step's call outlasts the deadline: without it, the model would be asked again.
        platform.publish([slow("nap", NAP_SECONDS, platform.backend)])
        model = platform.models[provider]
        model.script([[{"calls": [{"name": "nap", "arguments": {}}], "repeat": True}]])
        chat = platform.conversation(provider)

        result = chat.send("Take your time")

        assert result["stopped"] == {"reason": "turn-deadline", "message":
                                     f"The turn ran past its deadline of {TURN_DEADLINE:g} seconds and was stopped."}
        assert result["reply"] is None and len(result["steps"]) == 1
        assert json.loads(result["steps"][0]["results"][0]["output"]) == {"slept": NAP_SECONDS}  # the step ran out
        assert len(model.bodies()) == 1
        assert chat.history()[-1]["role"] == "platform"


def test_a_model_slower_than_the_deadline_times_out(tmp_path, provider):
    with turn_platform(tmp_path, providers=(provider,), turn_deadline_seconds=TURN_DEADLINE) as platform:
        platform.publish(shop_tools(platform.backend))
        platform.models[provider].script([[{"text": "Too late.", "delay": 3}]])
        chat = platform.conversation(provider)

        result = chat.send("Hurry")

        assert result["reply"] is None
        assert result["stopped"]["reason"] == "model-timed-out"
        assert [m["role"] for m in chat.history()] == ["user", "platform"]


def test_an_unreachable_model_ends_the_turn_and_keeps_the_message(tmp_path, provider, short_retry_pause):
    with turn_platform(tmp_path, providers=(provider,), model_url=f"http://127.0.0.1:{free_port()}") as platform:
        platform.publish(shop_tools(platform.backend))
        chat = platform.conversation(provider)

        result = chat.send("Anyone there?")

        assert result["stopped"] == {"reason": "model-unreachable",
                                     "message": "The model could not be reached; the turn was stopped."}
        assert [(m["role"], m.get("text")) for m in chat.history()] == [("user", "Anyone there?"), ("platform", None)]


def test_a_refusing_model_is_not_asked_again_and_its_error_is_not_repeated(platform, provider):
    platform.publish(shop_tools(platform.backend))
    model = platform.models[provider]
    model.script([[{"status": 401, "error": "secret-internal-detail"}]])
    chat = platform.conversation(provider)

    result = chat.send("Hi")

    assert result["stopped"] == {"reason": "model-refused",
                                 "message": "The model's API refused the request (HTTP 401); the turn was stopped."}
    assert "secret-internal-detail" not in json.dumps(result) + json.dumps(chat.history())
    assert len(model.bodies()) == 1


def test_a_model_error_5xx_is_asked_once_more(platform, provider, short_retry_pause):
    platform.publish(shop_tools(platform.backend))
    model = platform.models[provider]
    model.script([[{"status": 503, "error": "overloaded"}, {"text": "Recovered."}]])
    chat = platform.conversation(provider)

    assert chat.send("Hi")["reply"] == "Recovered."
    first, second = model.bodies()
    assert first == second


def test_a_malformed_answer_mid_turn_keeps_what_was_said(platform, provider):
    platform.publish(shop_tools(platform.backend))
    model = platform.models[provider]
    model.script([[{"calls": [SEARCH]}, {"raw": "this is not JSON"}], [{"text": "Back again."}]])
    chat = platform.conversation(provider)

    result = chat.send("Find milk")

    assert result["stopped"]["reason"] == "model-malformed" and result["reply"] is None
    (step,) = result["steps"]
    assert "Oat milk" in step["results"][0]["output"]
    assert [m["role"] for m in chat.history()] == ["user", "assistant", "tool", "platform"]
    assert chat.send("Hello?")["reply"] == "Back again."
    assert "Oat milk" in json.dumps(model.bodies()[-1])  # the next turn's model still has the earlier results


def test_one_turn_at_a_time_per_conversation(platform, provider):
    platform.publish([hold_tool(platform.backend)])
    platform.models[provider].script([[{"calls": [{"id": "h", "name": HOLD, "arguments": {}}]},
                                       {"text": "Held, then answered."}], [{"text": "Next."}]])
    chat = platform.conversation(provider)

    first = held_turn(platform, chat, "First")
    refused = chat.send("Second", expect=409)
    assert refused["code"] == "turn-in-progress"
    release(platform, provider)
    assert first.get(timeout=10)["reply"] == "Held, then answered."
    assert chat.send("Third")["reply"] == "Next."  # the lock was released
    history = chat.history()
    assert [m["role"] for m in history] == ["user", "assistant", "tool", "assistant", "user", "assistant"]
    assert [m["text"] for m in history if m.get("text")] == ["First", "Held, then answered.", "Third", "Next."]


def test_a_message_must_be_text(platform, provider):
    platform.publish(shop_tools(platform.backend))
    chat = platform.conversation(provider)
    for body in ({"text": ""}, {"text": 5}, {"text": None}, [], {"text": "x" * 40_000}):
        response = chat.service.as_session("POST", f"/v1/conversations/{chat.id}/messages", chat.token, json=body)
        assert response.status_code == 422, body
        assert response.json()["errors"][0]["rule"] == "message-format"
    # No text at all continues a turn paused for approval; with none paused there is nothing to continue.
    refused = chat.send_body({}, expect=409)
    assert refused["code"] == "nothing-to-continue" and "`text`" in refused["message"]
    assert chat.history() == [] and platform.models[provider].bodies() == []


def test_a_message_that_is_not_text_is_refused_naming_it(platform, provider):
    platform.publish(shop_tools(platform.backend))
    chat = platform.conversation(provider)
    response = requests.post(f"{chat.service.url}/v1/conversations/{chat.id}/messages", data=b'{"text": "hi \\ud800"}',
                             headers={"Authorization": f"Bearer {chat.token}", "Content-Type": "application/json"},
                             timeout=30)
    assert response.status_code == 422, response.text
    assert [(e["field"], e["rule"]) for e in response.json()["errors"]] == [("text", "unpaired-surrogate")]
    assert chat.history() == [] and platform.models[provider].bodies() == []


@pytest.mark.parametrize("call", [
    {"id": "\ud800", "name": "search_products", "arguments": {"q": "milk"}},
    {"id": "s", "name": "search_products", "arguments": {"q": ["\udfff"]}},
    {"id": "s", "name": "search_products", "arguments": {"\ud800": "milk"}},
], ids=["id", "argument-value", "argument-key"])
def test_a_model_call_that_is_not_text_is_malformed_and_nothing_of_the_step_is_sent(platform, provider, call):
    platform.publish(shop_tools(platform.backend))
    platform.models[provider].script([[{"calls": [call, SEARCH]}]])
    chat = platform.conversation(provider)

    result = chat.send("Find milk")

    assert result["stopped"]["reason"] == "model-malformed" and result["steps"] == []
    assert platform.backend_calls() == []
    assert [m["role"] for m in chat.history()] == ["user", "platform"]


def test_without_a_model_configured_a_turn_is_refused_clearly(tmp_path):
    with turn_platform(tmp_path, providers=("openai",), model="") as platform:
        platform.publish(shop_tools(platform.backend))
        chat = platform.conversation("openai")
        refused = chat.send("Hi", expect=503)
        assert refused["code"] == "model-not-configured" and "TOOLGATE_MODEL" in refused["message"]
        assert chat.history() == []


def test_more_calls_than_a_step_may_carry_are_not_run(platform, provider):
    platform.publish(shop_tools(platform.backend))
    platform.models[provider].script([[{"calls": [SEARCH] * (MAX_CALLS_PER_STEP + 1)}]])
    chat = platform.conversation(provider)

    result = chat.send("Everything at once")

    assert result["stopped"]["reason"] == "model-malformed" and result["steps"] == []
    assert platform.backend_calls() == []
    assert [m["role"] for m in chat.history()] == ["user", "platform"]


def test_calls_left_without_results_are_not_sent_to_the_model(platform, provider):
    """A process that died mid-step leaves calls with no results; both APIs refuse such a history."""
    platform.publish(shop_tools(platform.backend))
    model = platform.models[provider]
    model.script([[{"text": "Fine."}]])
    chat = platform.conversation(provider)
    with db.connection_context():
        conversation = Conversation.get_by_id(chat.id)
        Message.create(conversation=conversation, turn="t0", role="user", content={"text": "Earlier"})
        Message.create(conversation=conversation, turn="t0", role="assistant", content={
            "text": "Checking.", "calls": [{"id": "orphan", "name": "search_products", "arguments": {"q": "x"}}]})

    assert chat.send("Still there?")["reply"] == "Fine."

    sent = json.dumps(model.bodies()[0]["messages"])
    assert "orphan" not in sent and "Checking." in sent and "Earlier" in sent


def test_messages_and_the_turn_lock_on_each_engine(tmp_path, database_url):
    with turn_platform(tmp_path, providers=("openai",), database_url=database_url) as platform:
        platform.publish([hold_tool(platform.backend)])
        platform.models["openai"].script([[{"calls": [{"id": "h", "name": HOLD, "arguments": {}}]},
                                           {"text": "Found it."}], [{"text": "Next."}]])
        chat = platform.conversation("openai")

        first = held_turn(platform, chat, "Milk?")
        assert chat.send("Meanwhile", expect=409)["code"] == "turn-in-progress"
        release(platform, "openai")
        assert first.get(timeout=10)["reply"] == "Found it."
        assert chat.send("Then")["reply"] == "Next."
        assert [m["role"] for m in chat.history()] == ["user", "assistant", "tool", "assistant", "user", "assistant"]
