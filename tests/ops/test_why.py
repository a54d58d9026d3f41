"""Why not offered: every reason, and agreement with what a real conversation offers for the same claims."""
import pytest

from service.database import db
from service.models import ProjectDraft
from tests.support.definitions import tool

ENTITLED = "orders:admin"
TOOLS = [
    tool("orders"),
    tool("admin_orders", required_entitlement=ENTITLED),
    tool("profile", runs_at_session_start=True),
    tool("vip_profile", runs_at_session_start=True, required_entitlement="vip"),
]


@pytest.fixture
def shop(api):
    """shop v1 pins the four TOOLS; `stock` exists but is not pinned; kiosk's own tool belongs elsewhere."""
    for project in ("shop", "kiosk"):
        assert api("POST", "/v1/projects", {"name": project}).status_code == 201
    for definition in [*TOOLS, tool("stock"), {**tool("kiosk_only"), "project": "kiosk"}]:
        assert api("POST", "/v1/tools", definition).status_code == 201, definition
    pins = [{"tool": t["name"], "version": "draft"} for t in TOOLS]
    assert api("PUT", "/v1/projects/shop/draft", {"pins": pins}).status_code == 200
    assert api("POST", "/v1/projects/shop/publish").status_code == 201
    return api


def explain(api, query=""):
    response = api("GET", f"/v1/projects/shop/why-not-offered{query}")
    assert response.status_code == 200, response.json
    return {t["tool"]: t for t in response.json["tools"]}


def reasons(answer):
    return [r["reason"] for r in answer["reasons"]]


def test_a_pinned_tool_with_no_entitlement_is_offered(shop):
    answer = explain(shop)["orders"]
    assert (answer["offered"], answer["pinned"], reasons(answer)) == (True, 1, [])


def test_not_pinned(shop):
    answers = explain(shop)
    assert (answers["stock"]["offered"], reasons(answers["stock"])) == (False, ["not-pinned"])
    assert answers["stock"]["reasons"][0]["message"] == "This project version does not pin the tool."
    assert "kiosk_only" not in answers  # another project's tool is no candidate


def test_entitlement_missing(shop):
    answer = explain(shop)["admin_orders"]
    assert (answer["offered"], reasons(answer)) == (False, ["entitlement-missing"])
    assert answer["reasons"][0]["message"] == (
        "The session token does not carry the entitlement orders:admin that this tool requires.")
    assert explain(shop, f"?entitlement={ENTITLED}&subject=alice")["admin_orders"]["offered"] is True


def test_session_start_only(shop):
    answer = explain(shop)["profile"]
    assert (answer["offered"], answer["runs_at_session_start"], reasons(answer)) == (
        False, True, ["session-start-only"])
    vip = explain(shop)["vip_profile"]
    assert (vip["runs_at_session_start"], reasons(vip)) == (False, ["entitlement-missing", "session-start-only"])
    vip = explain(shop, "?entitlement=vip")["vip_profile"]
    assert (vip["offered"], vip["runs_at_session_start"], reasons(vip)) == (False, True, ["session-start-only"])


def test_a_project_draft_pinning_a_draft_that_was_published_since(shop):
    assert shop("POST", "/v1/tools", tool("beta")).status_code == 201
    assert shop("POST", "/v1/projects/shop/draft").status_code == 201
    pins = [{"tool": "orders", "version": 1}, {"tool": "beta", "version": "draft"}]
    assert shop("PUT", "/v1/projects/shop/draft", {"pins": pins}).status_code == 200
    assert explain(shop, "?version=draft")["beta"]["offered"] is True
    assert shop("POST", "/v1/tools/beta/publish").status_code == 201
    # Publishing froze beta for the project: its draft now pins version 1, which it still offers.
    answer = explain(shop, "?version=draft")["beta"]
    assert (answer["offered"], answer["pinned"]) == (True, 1)
    # A pin left pointing at the consumed draft (saved before publishing moved pins) is still explained.
    with db.connection_context():
        ProjectDraft.update(pins=pins).execute()
    answer = explain(shop, "?version=draft")["beta"]
    assert (answer["offered"], reasons(answer)) == (False, ["pinned-draft-missing"])
    assert explain(shop, "?version=1")["beta"]["reasons"][0]["reason"] == "not-pinned"


@pytest.mark.parametrize("entitlements", [[], [ENTITLED], [ENTITLED, "vip"]])
def test_the_answer_matches_what_a_real_conversation_offers(shop, client, keys, entitlements):
    token = shop("POST", "/v1/session-tokens", {"subject": "alice", "entitlements": entitlements},
                 key=keys["backend"]).json["token"]
    headers = {"Authorization": f"Bearer {token}"}
    opened = client.post("/v1/conversations", json={"project": "shop"}, headers=headers).json
    offered = {t["name"] for t in opened["tools"]}
    ran = {item["tool"] for item in opened["context"]}  # session-start tools (refused by the address guard here)
    query = "?" + "&".join(f"entitlement={e}" for e in entitlements)
    answers = explain(shop, query)
    assert offered == {name for name, a in answers.items() if a["offered"]}
    assert ran == {name for name, a in answers.items() if a["runs_at_session_start"]}


def test_bad_questions_are_refused(shop, other_api):
    assert shop("GET", "/v1/projects/shop/why-not-offered?version=two").status_code == 422
    assert shop("GET", "/v1/projects/shop/why-not-offered?version=5").status_code == 404
    assert shop("GET", "/v1/projects/nowhere/why-not-offered").status_code == 404
    assert other_api("GET", "/v1/projects/shop/why-not-offered").status_code == 404
    assert shop("POST", "/v1/projects", {"name": "empty"}).status_code == 201
    assert shop("GET", "/v1/projects/empty/why-not-offered").status_code == 409  # nothing published yet
