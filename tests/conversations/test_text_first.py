"""Text first, records always (issue 30): a step whose calls hold what is not text is refused before anything of it
is sent or stored, on both ways into the step route and on both engines; and a step's approvals are stored before
its other calls go out, so a database that refuses them refuses the step with nothing sent.

A JSON body may spell an unpaired surrogate (`"\\ud800"`): valid JSON, but no text. Each body below is written as
raw bytes, so the escape reaches the service as a client would send it."""
from __future__ import annotations

import contextlib
import json

import pytest
import requests

from service.database import make_database
from tests.support.definitions import tool
from tests.support.live import Conversation, live_service, mock_backend, publish_project
from tests.support.logs import captured_logs, log_lines

#: The two ways in: the lean route takes exactly this media type; Flask's view any JSON one.
LEAN, FLASK = "application/json", "application/step+json"
ORDER = {"name": "item", "type": "string", "location": "body"}
NOTE = {"name": "note", "type": "object", "location": "body", "required": False}
#: A step's other calls: a consequential one, which would be held, and an ordinary one, which would be sent.
OTHERS = ('{"id": "p", "name": "place_order", "arguments": {"item": "milk"}}, '
          '{"id": "l", "name": "look", "arguments": {}}')


@contextlib.contextmanager
def shop(tmp_path, database_url):
    """The service on `database_url` and the mock backend, with place_order (requires approval) and look (whose
    calls may carry any `note` object)."""
    with live_service(tmp_path, database_url=database_url) as service, mock_backend([service.issuer]) as backend:
        publish_project(service, [
            tool("place_order", f"{backend}/tools/place_order/echo", method="POST", parameters=[ORDER],
                 requires_approval=True),
            tool("look", f"{backend}/tools/look/echo", method="POST", parameters=[NOTE]),
        ])
        yield service, backend, Conversation(service, service.session_token("alice"))


def step(service, chat, body: bytes, media_type: str = LEAN) -> requests.Response:
    return requests.post(f"{service.url}/v1/conversations/{chat.id}/turns/{chat.turn()}/steps", data=body,
                         timeout=30, headers={"Content-Type": media_type, "Authorization": f"Bearer {chat.token}"})


def received(backend) -> list[dict]:
    """Every request the mock backend received."""
    return requests.get(f"{backend}/_calls", timeout=5).json()["calls"]


def approvals(service, chat) -> list[dict]:
    """The conversation's approvals."""
    return service.as_session("GET", f"/v1/conversations/{chat.id}/approvals", chat.token).json()["approvals"]


def stored(service, chat) -> tuple[list, list]:
    """The conversation's approvals and the organization's call records."""
    return approvals(service, chat), service.api("GET", "/v1/calls").json()["calls"]


# (the call, as raw JSON text, the field the refusal names, its rule)
NOT_TEXT = {
    "id": ('{"id": "\\ud800", "name": "look", "arguments": {}}', "calls[0].id", "unpaired-surrogate"),
    "id-nul": ('{"id": "a\\u0000b", "name": "look", "arguments": {}}', "calls[0].id", "control-character"),
    "name": ('{"id": "x", "name": "lo\\udfffok", "arguments": {}}', "calls[0].name", "unpaired-surrogate"),
    "argument-key": ('{"id": "x", "name": "look", "arguments": {"note": {"\\ud800": 1}}}',
                     'calls[0].arguments.note["\\ud800"]', "unpaired-surrogate"),
    "argument-value-in-array": ('{"id": "x", "name": "look", "arguments": {"note": {"lines": ["ok", "\\udc00"]}}}',
                                "calls[0].arguments.note.lines[1]", "unpaired-surrogate"),
    "argument-value-in-object": ('{"id": "x", "name": "look", "arguments": {"note": {"a b": {"c": "x\\ud83d"}}}}',
                                 'calls[0].arguments.note["a b"].c', "unpaired-surrogate"),
    "arguments-as-json-text": ('{"id": "x", "name": "look", "arguments": "{\\"note\\": {\\"c\\": \\"\\\\ud800\\"}}"}',
                               "calls[0].arguments.note.c", "unpaired-surrogate"),
}


@pytest.mark.parametrize("media_type", [LEAN, FLASK], ids=["lean", "flask"])
@pytest.mark.parametrize("case", list(NOT_TEXT))
def test_a_call_holding_what_is_not_text_is_refused_naming_it_and_nothing_is_sent(tmp_path, database_url, media_type,
                                                                                 case):
    call, field, rule = NOT_TEXT[case]
    with shop(tmp_path, database_url) as (service, backend, chat):
        body = f'{{"calls": [{call}, {OTHERS}]}}'.encode()
        json.loads(body)  # valid JSON, as a client may send it
        answer = step(service, chat, body, media_type)
        assert answer.status_code == 422, answer.text
        assert answer.json()["code"] == "invalid"
        assert [(e["field"], e["rule"]) for e in answer.json()["errors"]] == [(field, rule)]
        assert received(backend) == []  # neither the ordinary call nor any other
        assert stored(service, chat) == ([], [])  # no approval held, no call recorded


def test_every_call_that_is_not_text_is_named_at_once(service, backend):
    publish_project(service, [tool("look", f"{backend}/tools/look/echo")])
    chat = Conversation(service, service.session_token())
    body = b'{"calls": [{"id": "\\ud800", "name": "look", "arguments": {"\\udc00": "\\ud800"}}, 7, ' \
           b'{"id": "ok", "name": "look\\n", "arguments": {}}]}'
    answer = step(service, chat, body)
    assert answer.status_code == 422
    assert [(e["field"], e["rule"]) for e in answer.json()["errors"]] == [
        ("calls[0].id", "unpaired-surrogate"), ('calls[0].arguments["\\udc00"]', "unpaired-surrogate"),
        ("calls[1]", "call-format"), ("calls[2].name", "control-character")]
    assert received(backend) == []


def test_control_characters_in_arguments_are_data_and_sent(service, backend):
    # Only what is not text is refused: a line break or a NUL in a value is the caller's, stored escaped and sent.
    publish_project(service, [tool("look", f"{backend}/tools/look/echo", method="POST", parameters=[NOTE])])
    chat = Conversation(service, service.session_token())
    body = b'{"calls": [{"id": "1", "name": "look", "arguments": {"note": {"text": "a\\nb\\u0000c"}}}]}'
    answer = step(service, chat, body)
    assert answer.status_code == 200, answer.text
    assert json.loads(answer.json()["results"][0]["output"])["json"] == {"note": {"text": "a\nb\x00c"}}


def test_a_consequential_and_an_ordinary_call_are_both_recorded(tmp_path, database_url):
    with shop(tmp_path, database_url) as (service, backend, chat):
        answer = step(service, chat, f'{{"calls": [{OTHERS}]}}'.encode())
        assert answer.status_code == 200, answer.text
        held, looked = answer.json()["results"]
        assert held["approval"]["status"] == "pending" and "output" in looked
        listed, calls = stored(service, chat)
        assert [a["id"] for a in listed] == [held["approval"]["id"]] and listed[0]["call_id"] == "p"
        assert [(c["tool"], c["kind"]) for c in calls] == [("look", "ok")]
        assert [c["path"] for c in received(backend)] == ["/tools/look/echo"]


def refuse_writes(database_url: str, table: str) -> None:
    """Make the database refuse every new row of `table` as a failing database would (an OperationalError): SQLite
    has lost the table, PostgreSQL says its disk is full."""
    database = make_database(database_url, pooled=False)
    with database.connection_context():
        if database_url.startswith("sqlite"):
            database.execute_sql(f"ALTER TABLE {table} RENAME TO {table}_gone")
            return
        database.execute_sql("CREATE FUNCTION refuse_row() RETURNS trigger LANGUAGE plpgsql AS "
                             "$$ BEGIN RAISE EXCEPTION 'no space left' USING ERRCODE = 'disk_full'; END $$")
        database.execute_sql(f"CREATE TRIGGER refuse_rows BEFORE INSERT ON {table} "
                             "FOR EACH ROW EXECUTE FUNCTION refuse_row()")


def test_an_approval_the_database_refuses_refuses_the_step_before_anything_is_sent(tmp_path, database_url):
    with shop(tmp_path, database_url) as (service, backend, chat):
        refuse_writes(service.config.database_url, "approval")
        answer = step(service, chat, f'{{"calls": [{OTHERS}]}}'.encode())
        assert (answer.status_code, answer.json()["code"]) == (503, "database-unavailable")
        assert received(backend) == []  # the ordinary call was not sent with a signed assertion, unrecorded
        assert service.api("GET", "/v1/calls").json()["calls"] == []


def test_a_call_record_the_database_refuses_after_sending_is_still_logged_and_counted(tmp_path, database_url):
    with shop(tmp_path, database_url) as (service, backend, chat):
        refuse_writes(service.config.database_url, "call_record")
        with captured_logs() as logged:
            answer = step(service, chat, f'{{"calls": [{OTHERS}]}}'.encode())
        assert (answer.status_code, answer.json()["code"]) == (503, "database-unavailable")
        [sent] = received(backend)
        lines = [line for line in log_lines(logged) if line["logger"] == "service.call"]
        assert [(line["tool"], line["kind"], line["conversation"]) for line in lines] == [("look", "ok", chat.id)]
        assert sent["path"] == "/tools/look/echo"
        # The held call's approval was stored before the call went out: the person can still see and decide it.
        [approval] = approvals(service, chat)
        assert approval["status"] == "pending" and approval["call_id"] == "p"
