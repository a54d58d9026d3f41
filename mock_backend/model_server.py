"""A scripted model server: the Chat Completions and Messages wire formats, answered from a script.

Tests, the demo and the conformance kit use it to run whole turns offline. It stands alone (flask,
gevent) and imports nothing from `service`. Run it with

    toolgate model-server --port P [--script FILE] [--key K]     (or toolgate-model-server …, its own entry point)

A script is a JSON list of turns. A turn is a list of model responses, or
`{"when": ["word", …], "responses": [...]}`: such a turn is chosen whenever the person's message
contains one of its words (case-insensitive; "" matches anything) and is never used up, while a
plain list is used once, in order. A response is one of

    {"calls": [{"id": "c1", "name": "get_orders", "arguments": {"status": "open"}}, …], "text": "…"}
    {"text": "the answer; {results} is replaced by the tool results the model was just given"}
    {"status": 503, "error": "overloaded"}     an HTTP error in the API's own error format
    {"raw": "not json"}                         this body, as-is, with status 200

and may carry `"delay": seconds` (at most MAX_DELAY_SECONDS) and `"repeat": true` (served again
for every further request of its turn: a model that loops). `arguments` may be a string, sent
as-is, so a malformed one can be scripted. A request whose last message is the person's text
starts the next turn (unless it repeats the previous request: a retry); any other request takes
the next response of the current one. When a turn has no response left the server answers 500,
naming the script as the cause.

`GET /_requests` lists every request received (path and JSON body, oldest first), `DELETE
/_requests` forgets them, and `PUT /_script` replaces the script and starts it over. Nothing
about auth is checked but an optional fixed key (`Authorization: Bearer K` or `x-api-key: K`).
"""
if __name__ == "__main__":  # a process entry point patches first, before socket or ssl is imported
    from gevent import monkey

    monkey.patch_all()

import json
import secrets
import sys
import time
from collections import deque
from dataclasses import dataclass
from typing import Any

import click
import gevent
from flask import Flask, Response, jsonify, request

from commandline import PORT, CannotRun, run
from mock_backend.server import serve_app

MAX_DELAY_SECONDS = 30.0
MAX_RECORDED_REQUESTS = 1_000
MAX_REQUEST_BYTES = 8 * 1024 * 1024
RESPONSE_KEYS = frozenset({"calls", "text", "status", "error", "raw", "delay", "repeat"})

#: The demo shop's script for `make run`: ask about orders, products or the cart and the model calls the tool.
DEMO_SCRIPT = [
    {"when": ["order", "bought", "deliver", "ship"], "responses": [
        {"calls": [{"name": "get_orders", "arguments": {}}]},
        {"text": "Here is what I found in your orders:\n{results}"}]},
    # The cart before the products: "add oat milk to your cart", which the last turn offers, names milk too.
    {"when": ["cart", "buy"], "responses": [
        {"calls": [{"name": "add_to_cart", "arguments": {"product_ids": ["p1"]}}]},
        {"text": "I tried to add oat milk to your cart:\n{results}"}]},
    {"when": ["product", "milk", "search", "find", "price"], "responses": [
        {"calls": [{"name": "search_products", "arguments": {"q": "milk"}},
                   {"name": "search_products", "arguments": {"q": "tea"}}]},
        {"text": "I searched for milk and tea at once:\n{results}"}]},
    {"when": [""], "responses": [
        {"text": "I am a scripted model. Ask me about your orders, about products, "
                  "or to add oat milk to your cart."}]},
]


def _check_response(entry: Any, where: str) -> None:
    if not isinstance(entry, dict) or not entry or not set(entry) <= RESPONSE_KEYS:
        raise ValueError(f"{where}: a response is an object with some of {sorted(RESPONSE_KEYS)}")
    for i, call in enumerate(entry.get("calls", [])):
        if not isinstance(call, dict) or not isinstance(call.get("name"), str):
            raise ValueError(f"{where}.calls[{i}]: a call has a string name")
    if not any(k in entry for k in ("calls", "text", "status", "raw")):
        raise ValueError(f"{where}: a response has calls, text, a status or a raw body")
    delay = entry.get("delay", 0)
    if isinstance(delay, bool) or not isinstance(delay, (int, float)) or not 0 <= delay <= MAX_DELAY_SECONDS:
        raise ValueError(f"{where}: `delay` is a number of seconds from 0 to {MAX_DELAY_SECONDS:g}")
    if "status" in entry and not (isinstance(entry["status"], int) and 400 <= entry["status"] <= 599):
        raise ValueError(f"{where}: `status` is an HTTP error status, 400 to 599")
    if not isinstance(entry.get("raw", ""), str) or not isinstance(entry.get("text", ""), str):
        raise ValueError(f"{where}: `text` and `raw` are strings")


@dataclass
class ScriptedTurn:
    responses: list
    when: tuple | None  # None: a plain turn, used once

    def matches(self, text: str) -> bool:
        return self.when is not None and any(word.lower() in text.lower() for word in self.when)


def load_script(data: Any) -> list:
    """The script's turns, or ValueError saying what is wrong with it."""
    if not isinstance(data, list):
        raise ValueError("a script is a JSON list of turns")
    turns = []
    for t, turn in enumerate(data):
        when = None
        if isinstance(turn, dict):
            when = turn.get("when")
            when = [when] if isinstance(when, str) else when
            if not isinstance(when, list) or not all(isinstance(w, str) for w in when):
                raise ValueError(f"turn {t}: `when` is a word or a list of words")
            turn = turn.get("responses")
        if not isinstance(turn, list) or not turn:
            raise ValueError(f"turn {t}: a turn is a non-empty list of responses")
        for r, entry in enumerate(turn):
            _check_response(entry, f"turn {t} response {r}")
        turns.append(ScriptedTurn(list(turn), tuple(when) if when is not None else None))
    return turns


class Cursor:
    """Where the conversation is in the script."""

    def __init__(self, turns: list) -> None:
        self.turns, self.used, self.current, self.position, self.last = turns, set(), None, 0, None

    def next_response(self, person_text: str | None, messages: list) -> dict | None:
        """The response for a request: `person_text` is set when the request ends with the person's message.

        A request repeating the previous one's messages is a retry, and takes the next response of its turn.
        """
        retry, self.last = messages == self.last, messages
        if person_text is not None and not retry:
            self.current, self.position = None, 0
            for index, turn in enumerate(self.turns):
                if turn.matches(person_text) or (turn.when is None and index not in self.used):
                    self.current = turn
                    if turn.when is None:
                        self.used.add(index)
                    break
        if self.current is None:
            return None
        responses = self.current.responses
        if self.position >= len(responses):
            last = responses[-1]
            return last if last.get("repeat") else None
        self.position += 1
        return responses[self.position - 1]


def _text_of(content: Any) -> str | None:
    """The text of a message's content (a string or content blocks), None when it has none."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text"]
        return "\n".join(texts) if texts else None
    return None


def person_text(body: dict) -> str | None:
    """The person's text when the last message is theirs (so the request starts a turn), else None."""
    messages = body.get("messages") or [{}]
    last = messages[-1] if isinstance(messages[-1], dict) else {}
    return _text_of(last.get("content")) if last.get("role") == "user" else None


def tool_results(body: dict) -> list:
    """The tool results the request gives the model, as text, in either wire format."""
    found = []
    for message in reversed(body.get("messages") or []):
        if not isinstance(message, dict) or message.get("role") == "assistant":
            break
        if message.get("role") == "tool":
            found.insert(0, str(message.get("content", "")))
        elif isinstance(message.get("content"), list):
            blocks = [b for b in message["content"] if isinstance(b, dict) and b.get("type") == "tool_result"]
            found[:0] = [b.get("content") if isinstance(b.get("content"), str) else json.dumps(b.get("content"))
                         for b in blocks]
    return found


def _calls(entry: dict) -> list:
    return [{"id": call.get("id") or f"call_{secrets.token_hex(6)}", "name": call["name"],
             "arguments": call.get("arguments", {})} for call in entry.get("calls", [])]


def _text(entry: dict, body: dict) -> str:
    return entry.get("text", "").replace("{results}", "\n".join(tool_results(body)))


def chat_completion(entry: dict, body: dict) -> dict:
    """A response entry in the Chat Completions format."""
    calls = [{"id": c["id"], "type": "function", "function": {
        "name": c["name"],
        "arguments": c["arguments"] if isinstance(c["arguments"], str) else json.dumps(c["arguments"])}}
        for c in _calls(entry)]
    message = {"role": "assistant", "content": _text(entry, body) if "text" in entry else None}
    if calls:
        message["tool_calls"] = calls
    return {"id": f"chatcmpl-{secrets.token_hex(8)}", "object": "chat.completion", "created": int(time.time()),
            "model": body.get("model", "scripted"),
            "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}],
            "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}}


def anthropic_message(entry: dict, body: dict) -> dict:
    """A response entry in the Messages format."""
    content = [{"type": "text", "text": _text(entry, body)}] if "text" in entry else []
    calls = _calls(entry)
    content += [{"type": "tool_use", "id": c["id"], "name": c["name"], "input": c["arguments"]} for c in calls]
    return {"id": f"msg_{secrets.token_hex(8)}", "type": "message", "role": "assistant",
            "model": body.get("model", "scripted"), "content": content,
            "stop_reason": "tool_use" if calls else "end_turn", "stop_sequence": None,
            "usage": {"input_tokens": 0, "output_tokens": 0}}


def _error(wire: str, status: int, message: str) -> Response:
    if wire == "messages":
        payload = {"type": "error", "error": {"type": "api_error", "message": message}}
    else:
        payload = {"error": {"message": message, "type": "api_error", "code": None}}
    response = jsonify(payload)
    response.status_code = status
    return response


def create_model_app(script: list, key: str | None = None) -> Flask:
    """The scripted model server's app, following `script` (a JSON list of turns, see the module doc)."""
    app = Flask(__name__)
    app.config["MAX_CONTENT_LENGTH"] = MAX_REQUEST_BYTES
    app.json.sort_keys = False
    state = {"cursor": Cursor(load_script(script))}
    received: deque = deque(maxlen=MAX_RECORDED_REQUESTS)

    def answer(wire: str, render) -> Response:
        supplied = request.headers.get("x-api-key") or request.headers.get("Authorization", "")[len("Bearer "):]
        if key is not None and not secrets.compare_digest(supplied.encode(), key.encode()):
            return _error(wire, 401, "invalid api key")
        body = request.get_json(silent=True)
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            return _error(wire, 400, "the body must be a JSON object with a list of messages")
        received.append({"path": request.path, "body": body, "at": time.time()})
        if body.get("stream"):
            return _error(wire, 400, "the scripted model server does not stream")
        entry = state["cursor"].next_response(person_text(body), body["messages"])
        if entry is None:
            return _error(wire, 500, "the script has no response left for this request")
        gevent.sleep(entry.get("delay", 0))
        if "status" in entry:
            return _error(wire, entry["status"], str(entry.get("error", "scripted error")))
        if "raw" in entry:
            return Response(entry["raw"], status=200, content_type="application/json")
        return jsonify(render(entry, body))

    @app.post("/v1/chat/completions")
    def chat_completions():
        """The Chat Completions API: the next scripted response."""
        return answer("chat", chat_completion)

    @app.post("/v1/messages")
    def messages():
        """The Messages API: the next scripted response."""
        return answer("messages", anthropic_message)

    @app.get("/_requests")
    def list_requests():
        """Every request received, oldest first."""
        return jsonify(requests=list(received))

    @app.delete("/_requests")
    def clear_requests():
        """Forget the recorded requests."""
        received.clear()
        return "", 204

    @app.put("/_script")
    def replace_script():
        """Follow a new script from its start."""
        try:
            state["cursor"] = Cursor(load_script(request.get_json(silent=True)))
        except ValueError as error:
            return jsonify(error=str(error)), 400
        return "", 204

    @app.get("/_health")
    def health():
        """Up."""
        return jsonify(status="ok")

    return app


@click.command("model-server")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", default=8091, show_default=True, type=PORT,
              help="Port to listen on; 0 picks a free one (the printed URL has it).")
@click.option("--script", metavar="FILE", help="A JSON script of turns (default: the demo shop's).")
@click.option("--key", help="Require this API key (default: none).")
def command(host: str, port: int, script: str | None, key: str | None) -> None:
    """Run the scripted model: the Chat Completions and Messages APIs answered from a script (see
    mock_backend/model_server.py). Prints "model server listening on URL" once bound; stops on SIGTERM."""
    try:
        turns = DEMO_SCRIPT
        if script:
            with open(script, encoding="utf-8") as file:
                turns = json.load(file)
        app = create_model_app(turns, key)
    except (OSError, ValueError) as error:
        raise CannotRun(f"model server: {error}") from None
    serve_app(app, host, port, name="model server", ready="model server listening on {url}")


def main(argv: list[str] | None = None, prog: str = "toolgate-model-server") -> int:
    """The model server's own process (`toolgate-model-server`, `python -m mock_backend.model_server`): serve a
    script until stopped; 0 on a clean stop, 2 when it cannot start. `toolgate model-server` is this command too."""
    return run(command, argv, prog)


if __name__ == "__main__":
    sys.exit(main(prog="python -m mock_backend.model_server"))
