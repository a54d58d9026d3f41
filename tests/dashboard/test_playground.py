"""The playground over HTTP: a test subject's conversation, a step of calls, each result and its assertion."""
import json
import re
from datetime import datetime, timezone

import pytest
import requests

from service.dashboard.calls import decode_unverified
from tests.dashboard.client import Person
from tests.support.definitions import tool
from tests.support.live import publish_project

pytestmark = pytest.mark.service(per_module=True)  # each test names its own tools


@pytest.fixture(scope="module")
def project(module_service, module_backend):
    """A published project pinning every kind of tool the tests call, all on the mock backend."""
    service, backend = module_service, module_backend
    echo = f"{backend}/tools/{{}}/echo"
    subject = [{"name": "subject", "type": "string", "location": "path"}]
    tools = [
        # Two calls of it answer only once both are at the mock at the same time (mock_backend.gathering).
        tool("pair", f"{backend}/tools/pair/together/playground/2"),
        tool("refusing", f"{backend}/tools/refusing/status/404"),
        tool("echo_me", echo.format("echo_me") + "/users/{subject}", scope="per_user", parameters=subject),
        tool("entitled", echo.format("entitled"), required_entitlement="orders:read"),
        tool("starter", echo.format("starter") + "/users/{subject}", scope="per_user", parameters=subject,
             runs_at_session_start=True),
    ]
    publish_project(service, tools, "play")
    return "play"


def start(person: Person, subject="alice", entitlements="", anonymous=False, version="play:1"):
    form = {"version": version, "subject": subject, "entitlements": entitlements}
    if anonymous:
        form["anonymous"] = "on"
    return person.post("/playground", form)


def run(person: Person, *calls):
    form = {"op": "run"}
    for i, (name, arguments) in enumerate(calls):
        form[f"calls[{i}].name"] = name
        form[f"calls[{i}].arguments"] = arguments
    return person.post("/playground/step", form)


def offered(page) -> list[str]:
    return re.findall(r'<option value="(\w+)">', re.search(r"<datalist.*?</datalist>", page.text, re.S)[0])


def json_after(text: str, label: str):
    """The JSON block the page shows under `label` in one result."""
    block = text.split(label, 1)[1]
    start = block.index("{")
    return json.JSONDecoder().raw_decode(block[start:])[0]


def test_a_conversation_shows_its_context_and_the_tools_offered_for_the_entitlements(admin, project):
    page = start(admin)
    assert page.text_of("flash") == "Conversation started."
    context = page.text_of("context")
    assert context.startswith("starter ok") and '"sub": "alice"' in context
    assert sorted(offered(page)) == ["echo_me", "pair", "refusing"]  # no session-start tool, no unentitled one
    page = start(admin, entitlements="orders:read, other")
    assert sorted(offered(page)) == ["echo_me", "entitled", "pair", "refusing"]
    # The form shows the conversation's settings again.
    assert '<option value="play:1" selected>' in page.text and 'value="orders:read, other"' in page.text


def test_the_calls_of_a_step_run_at_once_and_each_shows_its_own_time(service, admin, project):
    start(admin)
    page = run(admin, ("pair", "{}"), ("pair", "{}"))
    assert page.status == 200
    turn = page.text_of("results-turn")
    recorded = {c["jti"]: c["latency_ms"] for c in service.api("GET", f"/v1/calls?turn={turn}").json()["calls"]}
    for call in ("call_1", "call_2"):
        text = page.text_of(f"result-{call}")
        assert text.startswith("pair " + call + " ok")
        output = json_after(text, "Output (what the model receives)")
        assert (output["met"], output["most_present"]) == (True, 2)  # both were at the mock at the same time
        # The time shown is the call's own, as the call log keeps it.
        jti = json_after(text, "Assertion the platform signed and sent (decoded)")["claims"]["jti"]
        assert re.search(r"(\d+) ms", text)[1] == f"{recorded[jti]:.0f}"


def test_each_failure_shows_the_failure_object_the_model_receives(admin, project):
    start(admin)
    page = run(admin, ("refusing", "{}"), ("ghost_tool", "{}"), ("echo_me", '{"unexpected": 1}'))
    failures = {call: json_after(page.text_of(f"result-{call}"), "Failure object (what the model receives)")
                for call in ("call_1", "call_2", "call_3")}
    assert failures == {"call_1": {"status": "error", "kind": "refused", "httpCode": 404},
                        "call_2": {"status": "error", "kind": "unknown-tool"},
                        "call_3": {"status": "error", "kind": "invalid-arguments"}}
    assert "No assertion: nothing was called." in page.text_of("result-call_2")
    assert "Assertion the platform signed and sent" in page.text_of("result-call_1")  # called, and refused


def received_by(backend: str, tool: str, call: int) -> dict:
    """The assertion the mock received on call `call` (its record's number, which its echo names), decoded."""
    [record] = [c for c in requests.get(f"{backend}/_calls", params={"tool": tool}, timeout=5).json()["calls"]
                if c["id"] == call]
    return decode_unverified(record["authorization"].removeprefix("Bearer "))


def test_the_assertion_is_shown_once_and_is_the_one_the_endpoint_received(service, module_backend, admin, project):
    start(admin)
    page = run(admin, ("echo_me", "{}"), ("refusing", "{}"))
    turn = page.text_of("results-turn")
    assert f'href="/calls?turn={turn}"' in page.text  # the step's calls, as the call log keeps them
    shown = page.text_of("result-call_1")
    assert shown.count("Assertion the platform signed and sent (decoded)") == 1
    sent = json_after(shown, "Assertion the platform signed and sent (decoded)")
    assert sent["header"]["typ"] == "JWT" and sent["header"]["alg"] == "ES256"
    claims = sent["claims"]
    assert (claims["iss"], claims["aud"], claims["sub"], claims["anon"], claims["turn"]) == (
        service.issuer, "echo_me", "alice", False, turn)
    assert "The endpoint verified this assertion" in shown and "Claims the endpoint verified" not in shown
    echo = json_after(shown, "Output (what the model receives)")
    assert received_by(module_backend, "echo_me", echo["call"]) == sent  # exactly the token the endpoint got
    assert "authorization" not in {k.lower() for k in echo["headers"]}  # and the model never gets it
    # A tool that is not an echo still shows the assertion the platform signed for it.
    signed = json_after(page.text_of("result-call_2"), "Assertion the platform signed and sent (decoded)")["claims"]
    assert (signed["iss"], signed["aud"], signed["sub"], signed["turn"]) == (service.issuer, "refusing", "alice", turn)
    assert signed["exp"] - signed["iat"] == 30
    assert "The endpoint verified" not in page.text_of("result-call_2")


def test_an_anonymous_session_is_anonymous_in_the_assertion(admin, project):
    start(admin, subject="visitor-7", anonymous=True)
    page = run(admin, ("echo_me", "{}"))
    claims = json_after(page.text_of("result-call_1"), "Assertion the platform signed and sent (decoded)")["claims"]
    assert claims["anon"] is True and claims["sub"] == "visitor-7"


def test_arguments_that_do_not_fit_are_named_with_what_is_wrong_for_the_admin_only(service, admin, project):
    start(admin)
    page = run(admin, ("echo_me", '{"unexpected": 1, "subject": "bob"}'))
    shown = page.text_of("result-call_1")
    assert json_after(shown, "Failure object (what the model receives)") == {"status": "error",
                                                                               "kind": "invalid-arguments"}
    assert "Why the arguments do not fit" in shown and "unexpected not a parameter of this tool" in shown
    assert "subject" not in shown.split("Why the arguments do not fit")[1]  # a model's subject is dropped, not wrong
    # What was wrong is worked out for this page alone: the call log keeps no argument either.
    logged = service.api("GET", "/v1/calls", params={"tool": "echo_me", "kind": "invalid-arguments"}).json()
    assert logged["calls"] and "unexpected" not in json.dumps(logged)


def test_arguments_that_are_not_a_json_object_are_shown_next_to_their_call(admin, project):
    start(admin)
    page = run(admin, ("pair", "{}"), ("pair", "{not json"))
    assert page.status == 422
    assert page.errors() == {"f-calls-1-arguments":
                             'Error: The arguments must be a JSON object, such as {"status": "open"}.'}
    assert "{not json</textarea>" in page.text  # what was typed stays


def test_a_conversation_needs_a_subject_and_a_version(admin, project):
    page = start(admin, subject=" ", version="")
    assert page.status == 422
    assert set(page.errors()) == {"f-subject", "f-version"}


def test_a_project_draft_version_can_be_tried_before_it_is_published(service, admin, project):
    assert service.api("POST", "/v1/projects/play/draft").status_code == 201
    page = start(admin, version="play:draft")
    assert "· play draft version ·" in page.text_of("conversation")
    assert sorted(offered(page)) == ["echo_me", "pair", "refusing"]


def test_the_playground_is_for_keys_that_may_mint_session_tokens(agent, project):
    assert agent.get("/playground").status == 403
    assert agent.post("/playground", {"version": "play:1", "subject": "alice"}).status == 403


# ---- calls held for the person's approval (issue 19) -----------------------------------------------------------

@pytest.fixture(scope="module")
def orders(module_service, module_backend):
    """A published project with a consequential tool (place_order, an echo, requires approval) and an ordinary one."""
    service, backend = module_service, module_backend
    tools = [tool("place_order", f"{backend}/tools/place_order/echo", method="POST", requires_approval=True,
                  parameters=[{"name": "item", "type": "string", "location": "body"}]),
             tool("look", f"{backend}/tools/look/echo")]
    publish_project(service, tools, "orders")
    return "orders:1"


def sent_to(backend: str, tool: str) -> list[dict]:
    return requests.get(f"{backend}/_calls", params={"tool": tool}, timeout=5).json()["calls"]


def held_call(person: Person, item="milk") -> tuple[dict, object]:
    """Run a step holding place_order beside a call of look; the approval the model is told of, and the page."""
    page = run(person, ("place_order", json.dumps({"item": item})), ("look", "{}"))
    assert page.status == 200
    shown = page.text_of("result-call_1")
    assert shown.startswith("place_order call_1 awaiting approval")
    held = json_after(shown, "Held for approval (what the model receives)")["approval"]
    assert held["status"] == "pending" and "No assertion yet" in shown
    assert page.text_of("result-call_2").startswith("look call_2 ok")  # the step's other call ran
    return held, page


def decide_in(person: Person, approval: str, decision: str):
    return person.post(f"/playground/approvals/{approval}", {"decision": decision})


def test_a_held_call_shows_its_arguments_and_expiry_and_approving_sends_it_once(module_backend, admin, orders):
    start(admin, version=orders)
    before = len(sent_to(module_backend, "place_order"))
    held, page = held_call(admin, "oat milk")
    card = page.text_of(f"approval-{held['id']}")
    expires = datetime.fromtimestamp(held["expires_at"], timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
    assert card.startswith("place_order call_1 pending") and f"expires {expires}" in card
    assert json_after(card, "Arguments approving sends, exactly") == {"item": "oat milk"}
    assert f'action="/playground/approvals/{held["id"]}"' in page.text
    assert len(sent_to(module_backend, "place_order")) == before  # nothing sent before the approval

    page = decide_in(admin, held["id"], "approve")

    assert page.status == 200 and page.text_of("decision-title") == "Approved: place_order"
    assert page.text_of("decision-claim") == held["id"]
    shown = page.text_of("decision-result")
    echo = json_after(shown, "Output (what the model receives)")
    assert echo["json"] == {"item": "oat milk"} and echo["method"] == "POST"
    signed = json_after(shown, "Assertion the platform signed and sent (decoded)")
    assert signed["claims"]["approval"] == held["id"] and "The endpoint verified this assertion" in shown
    assert received_by(module_backend, "place_order", echo["call"]) == signed  # the very token the endpoint got
    assert len(sent_to(module_backend, "place_order")) == before + 1
    # Decided: listed so, with nothing left to decide; a second decision is refused and sends nothing.
    assert page.text_of(f"approval-{held['id']}").startswith("place_order call_1 approved")
    assert f'action="/playground/approvals/{held["id"]}"' not in page.text
    again = decide_in(admin, held["id"], "decline")
    assert again.status == 409 and "already approved" in again.text
    assert len(sent_to(module_backend, "place_order")) == before + 1


def test_declining_a_held_call_sends_nothing_and_shows_what_the_model_is_told(module_backend, admin, orders):
    start(admin, version=orders)
    before = len(sent_to(module_backend, "place_order"))
    held, _ = held_call(admin)

    page = decide_in(admin, held["id"], "decline")

    assert page.text_of("decision-title") == "Declined: place_order"
    shown = page.text_of("decision-result")
    assert json_after(shown, "Failure object (what the model receives)") == {"status": "error", "kind": "declined"}
    assert "No assertion: nothing was called." in shown
    assert page.text_of(f"approval-{held['id']}").startswith("place_order call_1 declined")
    assert len(sent_to(module_backend, "place_order")) == before


def test_a_held_call_is_decided_only_by_its_conversations_subject_with_the_forms_token(module_backend, admin,
                                                                                       orders):
    start(admin, version=orders)
    before = len(sent_to(module_backend, "place_order"))
    held, _ = held_call(admin)
    forged = admin.post(f"/playground/approvals/{held['id']}", {"decision": "approve"}, csrf=False)
    assert forged.status == 400
    bad = decide_in(admin, held["id"], "maybe")
    assert bad.status == 422 and "A decision is approve or decline." in bad.text
    start(admin, subject="bob", version=orders)  # the playground now converses as bob, in another conversation
    assert decide_in(admin, held["id"], "approve").status == 404
    assert len(sent_to(module_backend, "place_order")) == before


def test_each_decision_button_names_its_call_so_two_held_calls_of_one_tool_are_told_apart(admin, orders):
    start(admin, version=orders)
    run(admin, ("place_order", json.dumps({"item": "milk"})))
    page = run(admin, ("place_order", json.dumps({"item": "tea"})), ("place_order", json.dumps({"item": "oats"})))
    assert page.status == 200
    # Three pending approvals of place_order: call_1 of the first step, call_1 and call_2 of the second.
    cards = re.findall(r'<li id="approval-([^"]+)" data-approval', page.text)
    names = []
    for approval in cards:
        card = page.text[page.text.index(f'<li id="approval-{approval}"'):]
        card = card[:card.index("</li>")]
        call = re.search(r'<span class="muted">(call_\d)</span>', card)[1]
        buttons = re.findall(r'<button type="submit" name="decision" value="(\w+)"[^>]*aria-label="([^"]+)">([^<]+)<',
                             card)
        assert [(value, text) for value, _, text in buttons] == [("approve", "Approve place_order"),
                                                                 ("decline", "Decline place_order")]
        for _, name, text in buttons:  # the visible text, then which call and which approval
            assert name == f"{text} {call}, approval {approval}"
            names.append(name)
    assert len(cards) == 3 and len(set(names)) == 6



def test_arguments_that_are_not_text_are_shown_next_to_their_call_and_nothing_is_sent(admin, project, module_backend):
    start(admin)
    before = requests.get(f"{module_backend}/_calls", timeout=5).json()["calls"]
    page = run(admin, ("refusing", "{}"), ("refusing", '{"a": {"\\ud800": ["\\udfff"]}}'))
    assert page.status == 422
    assert page.errors() == {"f-calls-1-arguments": "Error: This field holds an unpaired surrogate, which is not text."}
    assert requests.get(f"{module_backend}/_calls", timeout=5).json()["calls"] == before
