"""The scripted model server: its script, both wire formats, its key, its record, and its command line."""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import gevent
import pytest
import requests

import mock_backend
from mock_backend.model_server import DEMO_SCRIPT, load_script, main
from tests.turns.conftest import scripted_model

REPO = Path(mock_backend.__file__).resolve().parent.parent
CHAT, MESSAGES = "/v1/chat/completions", "/v1/messages"


def ask(model, text, path=CHAT, history=(), **headers):
    body = {"model": "m", "messages": [*history, {"role": "user", "content": text}]}
    return requests.post(model.url + path, json=body, headers=headers, timeout=5)


@pytest.mark.parametrize("script, complaint", [
    ({"turns": []}, "a JSON list of turns"),
    ([[]], "non-empty list of responses"),
    ([[{"say": "hi"}]], "an object with some of"),
    ([[{"delay": 1}]], "calls, text, a status or a raw body"),
    ([[{"calls": [{"arguments": {}}]}]], "a string name"),
    ([[{"text": "x", "delay": 99}]], "`delay`"),
    ([[{"status": 200}]], "`status`"),
    ([{"when": 5, "responses": [{"text": "x"}]}], "`when`"),
])
def test_a_malformed_script_is_refused_saying_why(script, complaint):
    with pytest.raises(ValueError, match=re.escape(complaint)):
        load_script(script)


def test_calls_then_text_in_the_chat_completions_format():
    with scripted_model([[{"calls": [{"id": "c1", "name": "get_orders", "arguments": {"status": "open"}},
                                     {"name": "search_products", "arguments": "{not json"}]},
                          {"text": "Results: {results}"}]]) as model:
        first = ask(model, "orders?").json()["choices"][0]
        assert first["finish_reason"] == "tool_calls" and first["message"]["content"] is None
        one, two = first["message"]["tool_calls"]
        assert one == {"id": "c1", "type": "function",
                       "function": {"name": "get_orders", "arguments": '{"status": "open"}'}}
        assert two["function"]["arguments"] == "{not json" and two["id"].startswith("call_")
        history = [{"role": "user", "content": "orders?"}, first["message"],
                   {"role": "tool", "tool_call_id": "c1", "content": "[1]"},
                   {"role": "tool", "tool_call_id": two["id"], "content": "[2]"}]
        body = {"model": "m", "messages": history}
        second = requests.post(model.url + CHAT, json=body, timeout=5).json()["choices"][0]
        assert second["finish_reason"] == "stop" and second["message"]["content"] == "Results: [1]\n[2]"
        assert [r["body"] for r in model.requests()][1] == body


def test_calls_then_text_in_the_messages_format():
    with scripted_model([[{"calls": [{"id": "t1", "name": "get_orders", "arguments": {}}], "text": "Looking."},
                          {"text": "Done: {results}"}]]) as model:
        first = ask(model, "orders?", MESSAGES).json()
        assert first["stop_reason"] == "tool_use" and first["content"] == [
            {"type": "text", "text": "Looking."}, {"type": "tool_use", "id": "t1", "name": "get_orders", "input": {}}]
        results = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "[]"}]}
        body = {"model": "m", "messages": [{"role": "user", "content": "orders?"},
                                          {"role": "assistant", "content": first["content"]}, results]}
        second = requests.post(model.url + MESSAGES, json=body, timeout=5).json()
        assert second["stop_reason"] == "end_turn" and second["content"] == [{"type": "text", "text": "Done: []"}]


def test_turns_follow_in_order_and_a_spent_turn_answers_500():
    with scripted_model([[{"text": "one"}], [{"text": "two"}]]) as model:
        assert ask(model, "a").json()["choices"][0]["message"]["content"] == "one"
        later = [{"role": "user", "content": "a"}, {"role": "assistant", "content": "one"}]
        assert ask(model, "b", history=later).json()["choices"][0]["message"]["content"] == "two"
        spent = ask(model, "c", history=later)
        assert spent.status_code == 500 and "no response left" in spent.json()["error"]["message"]


def test_a_retry_repeats_the_request_and_stays_in_its_turn():
    with scripted_model([[{"status": 503}, {"text": "second try"}], [{"text": "next turn"}]]) as model:
        assert ask(model, "hi").status_code == 503
        assert ask(model, "hi").json()["choices"][0]["message"]["content"] == "second try"


def test_keyed_turns_match_words_and_repeat_loops():
    script = [{"when": ["order"], "responses": [{"text": "orders!"}]},
              {"when": "loop", "responses": [{"calls": [{"name": "x"}], "repeat": True}]},
              {"when": [""], "responses": [{"text": "fallback"}]}]
    with scripted_model(script) as model:
        assert ask(model, "My ORDERS please").json()["choices"][0]["message"]["content"] == "orders!"
        assert ask(model, "anything", history=[{"role": "user", "content": "x"}]).json()[
            "choices"][0]["message"]["content"] == "fallback"
        loop = ask(model, "loop", history=[{"role": "user", "content": "y"}]).json()["choices"][0]["message"]
        again = [{"role": "user", "content": "loop"}, loop, {"role": "tool", "tool_call_id": "1", "content": ""}]
        for _ in range(3):
            body = {"model": "m", "messages": again}
            answer = requests.post(model.url + CHAT, json=body, timeout=5).json()["choices"][0]["message"]
            assert answer["tool_calls"][0]["function"]["name"] == "x"
            again = again + [answer, {"role": "tool", "tool_call_id": "1", "content": ""}]


def test_errors_and_raw_bodies_in_each_format():
    with scripted_model([[{"status": 429, "error": "slow down"}], [{"raw": "garbage"}]]) as model:
        refused = ask(model, "a", MESSAGES)
        assert refused.status_code == 429 and refused.json()["error"]["message"] == "slow down"
        raw = ask(model, "b", MESSAGES, history=[{"role": "user", "content": "a"}])
        assert raw.status_code == 200 and raw.text == "garbage"


def test_an_optional_key_is_required_in_either_header():
    with scripted_model([{"when": [""], "responses": [{"text": "ok"}]}], key="sekrit") as model:
        assert ask(model, "a").status_code == 401
        assert ask(model, "a", MESSAGES, **{"x-api-key": "wrong"}).status_code == 401
        assert ask(model, "b", Authorization="Bearer sekrit").status_code == 200
        assert ask(model, "c", MESSAGES, **{"x-api-key": "sekrit"}).status_code == 200


def test_the_script_can_be_replaced_and_requests_forgotten():
    with scripted_model([[{"text": "old"}]]) as model:
        ask(model, "a")
        assert requests.put(model.url + "/_script", json=[[]], timeout=5).status_code == 400
        model.script([[{"text": "new"}]])
        assert ask(model, "b").json()["choices"][0]["message"]["content"] == "new"
        assert len(model.requests()) == 2
        assert requests.delete(model.url + "/_requests", timeout=5).status_code == 204
        assert model.requests() == []


def test_the_demo_script_talks_about_orders():
    with scripted_model(DEMO_SCRIPT) as model:
        orders = ask(model, "Where are my orders?").json()["choices"][0]["message"]
        assert orders["tool_calls"][0]["function"]["name"] == "get_orders"
        hello = ask(model, "hello", history=[{"role": "user", "content": "x"}]).json()["choices"][0]["message"]
        assert "scripted model" in hello["content"]


def test_the_demo_script_does_what_its_own_offer_says():
    with scripted_model(DEMO_SCRIPT) as model:
        hello = ask(model, "hello").json()["choices"][0]["message"]["content"]
        offer = re.search(r"or to (add oat milk to your cart)", hello)
        assert offer, hello
        calls = ask(model, offer.group(1)).json()["choices"][0]["message"]["tool_calls"]
        assert [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in calls] == [
            ("add_to_cart", {"product_ids": ["p1"]})]  # p1 is the shop's oat milk
        products = ask(model, "Do you have milk?").json()["choices"][0]["message"]["tool_calls"]
        assert {c["function"]["name"] for c in products} == {"search_products"}


def test_the_command_line_serves_a_script_file(tmp_path):
    script = tmp_path / "script.json"
    script.write_text(json.dumps([[{"text": "from a file"}]]))
    command = [sys.executable, "-m", "mock_backend.model_server", "--port", "0", "--script", str(script)]
    child = subprocess.Popen(command, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        with gevent.Timeout(20):
            line = child.stdout.readline()
        match = re.fullmatch(r"model server listening on (http://127\.0\.0\.1:\d+)\n", line)
        assert match, line
        body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
        answer = requests.post(match.group(1) + CHAT, json=body, timeout=5).json()
        assert answer["choices"][0]["message"]["content"] == "from a file"
    finally:
        child.terminate()
        child.wait(timeout=5)
        child.stdout.close()
        child.stderr.close()


def test_the_command_line_refuses_a_bad_script(tmp_path, capsys):
    script = tmp_path / "bad.json"
    script.write_text("[[]]")
    assert main(["--script", str(script)]) == 2
    assert "non-empty list of responses" in capsys.readouterr().err
    assert main(["--script", str(tmp_path / "missing.json")]) == 2


def test_importing_the_model_server_does_not_patch():
    code = "import mock_backend.model_server; from gevent import monkey; print(monkey.is_module_patched('socket'))"
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=30)
    assert result.stdout.strip() == "False", result.stderr
