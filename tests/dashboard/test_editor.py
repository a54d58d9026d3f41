"""Registering and the editor over HTTP: every rule's violation next to its field, unsaved work kept, versions."""
import re

import pytest

from service.dashboard.forms import field_id
from service.database import db
from service.provisioning import create_organization_with_keys
from tests.dashboard.client import Person
from tests.registry.vectors import REFUSED

pytestmark = pytest.mark.service(per_module=True)  # each test names its own tools

VALID = {"description": "Orders.", "method": "GET", "url": "https://api.example.com/orders"}


def register(person: Person, name: str, **fields):
    return person.post("/tools/new", {"name": name, **VALID, **fields})


def as_form(definition: dict) -> dict:
    """A definition as the editor's form sends it: field paths as names, checkboxes "on" when set."""
    form = {"op": "save", "description": definition.get("description") or "", "method": definition["method"],
            "url": definition["url"], "scope": definition.get("scope") or "shared",
            "required_entitlement": definition.get("required_entitlement") or ""}
    for flag in ("runs_at_session_start", "requires_approval"):
        if definition.get(flag):
            form[flag] = "on"
    for i, parameter in enumerate(definition.get("parameters", [])):
        for key, value in parameter.items():
            if key != "required" and value is not None:
                form[f"parameters[{i}].{key}"] = value
        if parameter.get("required", True):
            form[f"parameters[{i}].required"] = "on"
    return form


def shown(violations) -> dict[str, str]:
    grouped: dict[str, list[str]] = {}
    for v in violations:
        grouped.setdefault(field_id(v["field"]), []).append(f"Error: {v['message']}")
    return {k: " ".join(v) for k, v in grouped.items()}


def _typed_as_is(vector) -> bool:
    """Whether a person could type the vector's values into the editor: its one-line inputs are trimmed, so a value
    with whitespace around it (a trailing line break) reaches the rules trimmed, and is refused only by the API; and
    a choice left empty (scope, type) is a choice not made, so an empty string is refused only by the API too."""
    definition = vector["definition"]
    values = [definition.get("required_entitlement") or ""] + [p.get("name") or "" for p in
                                                               definition.get("parameters", [])]
    choices = [definition.get("scope")] + [p.get("type") for p in definition.get("parameters", [])]
    return all(value == value.strip() for value in values) and "" not in choices


# The shaping vectors' fields are one input each on the page, their items' violations gathered there:
# tests/dashboard/test_shaping_editor.py.
EDITABLE = [v for v in REFUSED if any(x["field"] != "name" for x in v["violations"]) and _typed_as_is(v)
            and not {"response_shape", "error_fields", "outcome_messages"} & set(v["definition"])]


@pytest.mark.parametrize("vector", EDITABLE, ids=[v["id"] for v in EDITABLE])
def test_save_shows_every_violation_of_each_rule_next_to_its_field(service, admin, vector):
    name = "v_" + re.sub(r"\W", "_", vector["id"])
    assert register(admin, name).status == 200
    page = admin.post(f"/tools/{name}/draft", as_form(vector["definition"]))
    assert page.status == 422
    # The name is fixed in the editor, so only a registration can break a name rule.
    assert page.errors() == shown(v for v in vector["violations"] if v["field"] != "name")


# A blank name input is refused as required by the form itself, and a name with whitespace around it is trimmed;
# the API refuses both with the name rule (tests/registry).
NAMED = [v for v in REFUSED if any(x["field"] == "name" for x in v["violations"])
         and v["definition"]["name"] and v["definition"]["name"] == v["definition"]["name"].strip()]


@pytest.mark.parametrize("vector", NAMED, ids=[v["id"] for v in NAMED])
def test_registering_shows_a_name_rule_next_to_the_name(service, admin, vector):
    page = register(admin, vector["definition"]["name"])
    assert page.status == 422
    assert page.error_at("f-name") == "Error: " + next(v["message"] for v in vector["violations"]
                                                         if v["field"] == "name")


def test_registering_a_taken_name_says_so_next_to_the_name(service, admin):
    assert register(admin, "taken").url.endswith("/tools/taken/draft")
    page = register(admin, "taken")
    assert page.status == 409
    assert page.error_at("f-name") == "Error: A tool with this name already exists."


def test_registering_with_nothing_filled_in_names_every_missing_field_in_the_specs_voice(service, admin):
    page = admin.post("/tools/new", {"name": "", "description": "", "method": "", "url": ""})
    assert page.status == 422
    assert page.errors() == {"f-name": "Error: A tool needs a tool name: the function name the model calls.",
                             "f-description": "Error: A tool needs a description, written for the model.",
                             "f-method": "Error: A tool needs a method, one of GET, POST, PUT, PATCH, or DELETE.",
                             "f-url": "Error: A tool needs a URL: the address the platform calls."}
    # The summary names each field by the label the form gives it, in the order the form shows them.
    assert page.text_of("error-summary") == (
        "There is a problem Tool name: A tool needs a tool name: the function name the model calls. "
        "Description: A tool needs a description, written for the model. "
        "Method: A tool needs a method, one of GET, POST, PUT, PATCH, or DELETE. "
        "URL: A tool needs a URL: the address the platform calls.")


def test_registering_a_url_with_a_placeholder_and_its_parameter_opens_the_editor(service, admin):
    page = register(admin, "by_order", url="https://api.example.com/orders/{order_id}",
                    **{"parameters[0].name": "order_id", "parameters[0].type": "string",
                       "parameters[0].location": "path", "parameters[0].required": "on"})
    assert page.url.endswith("/tools/by_order/draft")
    [parameter] = service.api("GET", "/v1/tools/by_order").json()["draft"]["definition"]["parameters"]
    assert (parameter["name"], parameter["location"], parameter["required"]) == ("order_id", "path", True)


def test_a_placeholder_without_its_parameter_adds_the_parameter_for_the_next_try(service, admin):
    page = register(admin, "by_user", url="https://api.example.com/users/{subject}/orders/{order_id}")
    assert page.status == 422
    assert page.error_at("f-url") == "Error: A placeholder in the URL needs a path parameter of the same name."
    assert page.text_of("register-note") == (
        "Added a path parameter for {subject} and {order_id} from the URL; check them and register again. "
        "The {subject} placeholder makes the tool per-user: the platform fills it from the session token.")
    assert re.findall(r'name="parameters\[\d+\]\.name" value="([^"]*)"', page.text) == ["subject", "order_id"]
    # Sent again as the page now stands, it registers.
    form = {"name": "by_user", **VALID, "url": "https://api.example.com/users/{subject}/orders/{order_id}",
            "scope": "per_user"}
    for i, name in enumerate(("subject", "order_id")):
        form.update({f"parameters[{i}].name": name, f"parameters[{i}].type": "string",
                     f"parameters[{i}].location": "path", f"parameters[{i}].required": "on"})
    assert 'value="per_user" selected' in page.text
    assert admin.post("/tools/new", form).url.endswith("/tools/by_user/draft")


def test_the_register_form_adds_and_removes_parameter_rows_without_the_script(service, admin):
    page = admin.post("/tools/new", {"name": "rows_on_register", **VALID, "op": "add"})
    assert page.status == 200
    assert re.findall(r'name="parameters\[\d+\]\.name" value="([^"]*)"', page.text) == [""]
    assert 'value="rows_on_register"' in page.text  # what was typed stays
    assert service.api("GET", "/v1/tools/rows_on_register").status_code == 404


def test_registering_opens_the_editor_on_the_new_draft(service, admin):
    page = register(admin, "fresh_tool", display_name="Fresh")
    assert page.url.endswith("/tools/fresh_tool/draft")
    assert "<h1>Fresh</h1>" in page.text and 'value="fresh_tool" readonly' in page.text
    assert service.api("GET", "/v1/tools/fresh_tool").json()["draft"]["revision"] == 1


def test_a_refused_save_keeps_everything_typed_and_marks_it_unsaved(service, admin):
    register(admin, "keeps_edits")
    form = as_form({**VALID, "description": "Typed but not saved.", "scope": "per_user",
                    "parameters": [{"name": "status", "type": "string", "location": "query"}]})
    page = admin.post("/tools/keeps_edits/draft", form)
    assert page.status == 422
    assert "Typed but not saved.</textarea>" in page.text
    assert 'value="status"' in page.text and 'data-dirty="true"' in page.text
    assert service.api("GET", "/v1/tools/keeps_edits").json()["draft"]["definition"]["description"] == "Orders."


def test_a_valid_save_edits_the_one_draft_in_place(service, admin):
    register(admin, "in_place")
    form = as_form({**VALID, "url": "https://api.example.com/users/{subject}/orders", "scope": "per_user",
                    "parameters": [{"name": "subject", "type": "string", "location": "path"}]})
    page = admin.post("/tools/in_place/draft", form)
    assert page.url.endswith("/tools/in_place/draft") and page.text_of("flash") == "Saved."
    draft = service.api("GET", "/v1/tools/in_place").json()["draft"]
    assert draft["revision"] == 2 and draft["definition"]["scope"] == "per_user"


def test_locked_controls_left_out_take_the_editors_values(service, admin):
    """With the page's script, the subject's type and an array's location are disabled and not sent."""
    register(admin, "locked", method="POST")
    form = {"op": "save", **VALID, "method": "POST", "url": "https://api.example.com/users/{subject}",
            "scope": "per_user", "parameters[0].name": "subject", "parameters[0].location": "path",
            "parameters[0].required": "on", "parameters[1].name": "ids", "parameters[1].type": "array",
            "parameters[1].element_type": "number", "parameters[1].required": "on"}
    assert "Saved." in admin.post("/tools/locked/draft", form).text
    parameters = service.api("GET", "/v1/tools/locked").json()["draft"]["definition"]["parameters"]
    assert [(p["name"], p["type"], p["location"]) for p in parameters] == [("subject", "string", "path"),
                                                                           ("ids", "array", "body")]


def test_a_stale_save_is_refused_and_keeps_the_edits(service, admin):
    register(admin, "stale")
    page = admin.get("/tools/stale/draft")
    etag = re.search(r'name="etag" value="([^"]+)"', page.text)[1]
    assert service.api("PUT", "/v1/tools/stale/draft", json={**VALID, "description": "Someone else."}).ok
    page = admin.post("/tools/stale/draft", {**as_form({**VALID, "description": "Mine."}), "etag": etag})
    assert page.status == 412
    assert "The draft has changed since you read it; reload it and save again." in page.text
    assert "Mine.</textarea>" in page.text
    assert service.api("GET", "/v1/tools/stale").json()["draft"]["definition"]["description"] == "Someone else."


@pytest.mark.parametrize("op, names", [("add", ["a", "b", ""]), ("up-1", ["b", "a"]), ("down-0", ["b", "a"]),
                                       ("remove-0", ["b"])])
def test_rows_change_without_the_script_and_nothing_is_saved(service, admin, op, names):
    tool = "rows_" + re.sub(r"\W", "_", op)
    register(admin, tool, method="POST")
    form = as_form({**VALID, "method": "POST", "parameters": [
        {"name": "a", "type": "string", "location": "query"}, {"name": "b", "type": "number", "location": "body"}]})
    page = admin.post(f"/tools/{tool}/draft", {**form, "op": op})
    assert page.status == 200
    assert re.findall(r'name="parameters\[\d+\]\.name" value="([^"]*)"', page.text) == names
    assert 'data-dirty="true"' in page.text
    assert service.api("GET", f"/v1/tools/{tool}").json()["draft"]["revision"] == 1


def test_a_blank_display_name_becomes_the_tool_name(service, admin):
    register(admin, "relabelled", display_name="Old label")
    admin.post("/tools/relabelled/draft", {**as_form(VALID), "display_name": ""})
    assert service.api("GET", "/v1/tools/relabelled").json()["display_name"] == "relabelled"


@pytest.mark.parametrize("blank", ["\u00a0", "\u2003", "\u3000", "\u2028", "\u200b", "\ufeff"])
def test_a_display_name_of_unicode_blanks_becomes_the_tool_name(service, admin, blank):
    name = f"blank_{ord(blank):x}"
    register(admin, name, display_name=blank)
    assert service.api("GET", f"/v1/tools/{name}").json()["display_name"] == name
    admin.post(f"/tools/{name}/label", {"display_name": "Old label"})
    admin.post(f"/tools/{name}/draft", {**as_form(VALID), "display_name": blank})
    assert service.api("GET", f"/v1/tools/{name}").json()["display_name"] == name
    admin.post(f"/tools/{name}/label", {"display_name": "Old label"})
    admin.post(f"/tools/{name}/label", {"display_name": blank})
    assert service.api("GET", f"/v1/tools/{name}").json()["display_name"] == name


def test_a_published_tool_can_be_relabelled_and_stays_read_only(service, admin):
    register(admin, "frozen")
    page = admin.post("/tools/frozen/publish")
    assert page.url.endswith("/tools/frozen/versions/1")
    assert admin.post("/tools/frozen/label", {"display_name": "Frozen orders"}).url.endswith("/versions/1")
    tool = service.api("GET", "/v1/tools/frozen").json()
    assert tool["display_name"] == "Frozen orders" and tool["draft"] is None
    page = admin.get("/tools/frozen/versions/1")
    assert page.text.count('<fieldset class="definition" disabled>') == 1
    assert page.text.count('<fieldset class="parameters" id="f-parameters" tabindex="-1" disabled>') == 1
    assert "Save draft" not in page.text and "Start a new draft" in page.text
    # A write to the draft URL of a tool with no draft saves nothing; it goes back to the version.
    assert admin.post("/tools/frozen/draft", as_form(VALID)).url.endswith("/tools/frozen/versions/1")
    assert service.api("GET", "/v1/tools/frozen").json()["draft"] is None


def test_publishing_confirms_what_freezes_first(service, admin):
    register(admin, "confirmed")
    page = admin.get("/tools/confirmed/publish")
    assert "Publish confirmed as version 1?" in page.text
    assert "can never change again" in page.text
    assert service.api("GET", "/v1/tools/confirmed").json()["versions"] == []


def test_publishing_a_tool_says_which_project_drafts_move_to_the_new_version(service, admin):
    register(admin, "moved_tool")
    for project in ("moving_a", "moving_b"):
        admin.post("/projects", {"name": project})
        admin.post(f"/projects/{project}/draft", [("pin-moved_tool", "draft")])
    confirm = admin.get("/tools/moved_tool/publish")
    assert confirm.text_of("repinning") == ("The draft versions of moving_a and moving_b pin this tool's draft: "
                                            "publishing moves them to version 1.")
    page = admin.post("/tools/moved_tool/publish")
    assert page.text_of("flash") == ("Published version 1. It can never change; start a new draft to go on. "
                                     "The draft version of moving_a now pins moved_tool version 1. "
                                     "The draft version of moving_b now pins moved_tool version 1.")
    register(admin, "pinned_nowhere")
    alone = admin.get("/tools/pinned_nowhere/publish")
    assert alone.status == 200 and 'id="repinning"' not in alone.text


def test_another_organizations_tools_are_not_found(service, admin):
    with db.connection_context():
        other_key = create_organization_with_keys(service.config, "globex")
    other = Person(service.url)
    other.sign_in(other_key)
    assert register(other, "globex_secret").url.endswith("/tools/globex_secret/draft")
    for path in ("/tools/globex_secret/draft", "/tools/globex_secret/versions/1", "/tools/globex_secret/publish"):
        assert admin.get(path).status == 404
    assert "globex_secret" not in admin.get("/tools").text


def test_what_a_person_typed_is_shown_as_text_never_markup(service, admin):
    register(admin, "escaped", display_name="<script>alert(1)</script>")
    page = admin.get("/tools")
    assert "<script>alert(1)</script>" not in page.text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page.text


def test_an_agent_edits_drafts_but_never_sees_or_uses_publish(service, agent):
    assert register(agent, "agent_tool").url.endswith("/tools/agent_tool/draft")
    page = agent.get("/tools/agent_tool/draft")
    assert "Save draft" in page.text and "/tools/agent_tool/publish" not in page.text
    assert agent.get("/tools/agent_tool/publish").status == 403
    assert agent.post("/tools/agent_tool/publish").status == 403
    assert service.api("GET", "/v1/tools/agent_tool").json()["versions"] == []


def test_a_published_version_states_approval_and_entitlement_in_words(service, admin):
    """*Requires approval* reads as plainly as the method and URL (it was a pale disabled tick), and an empty
    entitlement reads "None" (it was an empty box)."""
    register(admin, "plain_facts")
    assert service.api("PUT", "/v1/tools/plain_facts/draft", json={**VALID, "requires_approval": True}).ok
    admin.post("/tools/plain_facts/publish")
    page = admin.get("/tools/plain_facts/versions/1")
    assert page.text_of("f-requires_approval-fact") == (
        "Requires approval Yes: the person in the conversation approves each call before it is sent")
    assert page.text_of("f-required_entitlement-fact") == "Required entitlement None (available to every session)"
    assert page.text_of("f-runs_at_session_start-fact") == "Runs at session start No"
    assert 'type="checkbox" id="f-requires_approval"' not in page.text
