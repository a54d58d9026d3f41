"""The playground's "Why not offered" panel: each reason, for the chosen project version and claims, as the API says."""
import html
import re

import pytest

from tests.dashboard.test_playground import offered

pytestmark = pytest.mark.service(per_module=True)  # each test names its own tools

ENTITLEMENT = "orders:admin"


def shown(page) -> dict[str, dict]:
    """Each row of the panel: the tool → where it is pinned, whether it is offered, and the reasons shown."""
    rows = {}
    for tool, row in re.findall(r'<tr id="why-(\w+)">(.*?)</tr>', page.text, re.S):
        cells = [" ".join(html.unescape(re.sub(r"<[^>]+>", " ", c)).split())
                 for c in re.findall(r"<t[hd]\b[^>]*>(.*?)</t[hd]>", row, re.S)]
        reasons = dict(re.findall(r'<li data-reason="([\w-]+)">(.*?)</li>', row, re.S))
        rows[tool] = {"pinned": cells[1], "offered": cells[2], "reasons": {k: html.unescape(v)
                                                                          for k, v in reasons.items()}}
    folded = re.search(r'<details class="unpinned" id="why-unpinned">(.*?)</details>', page.text, re.S)
    if folded:  # the tools the version does not pin, folded into one line and sharing their reason
        reasons = {k: html.unescape(v) for k, v in re.findall(r'data-reason="([\w-]+)">(.*?)<', folded[1])}
        for tool in re.findall(r'<li id="why-(\w+)">', folded[1]):
            rows[tool] = {"pinned": "Not pinned", "offered": "Not offered", "reasons": reasons}
    return rows


@pytest.fixture(scope="module")
def why_project(module_service, module_backend):
    """why_shop v1 pins a plain tool, an entitled one and a session-start one; why_stock is pinned nowhere; the
    project's draft pins why_beta's draft, which is then published on its own."""
    service, backend = module_service, module_backend
    echo = f"{backend}/tools/{{}}/echo"
    tools = [
        {"name": "why_plain", "url": echo.format("why_plain")},
        {"name": "why_entitled", "url": echo.format("why_entitled"), "required_entitlement": ENTITLEMENT},
        {"name": "why_start", "url": echo.format("why_start") + "/users/{subject}", "scope": "per_user",
         "runs_at_session_start": True, "parameters": [{"name": "subject", "type": "string", "location": "path"}]},
        {"name": "why_stock", "url": echo.format("why_stock")},
        {"name": "why_beta", "url": echo.format("why_beta")},
    ]
    for tool in tools:
        response = service.api("POST", "/v1/tools", json={"description": "Why.", "method": "GET", **tool})
        assert response.status_code == 201, response.text
    assert service.api("POST", "/v1/projects", json={"name": "why_shop"}).status_code == 201
    pins = [{"tool": name, "version": "draft"} for name in ("why_plain", "why_entitled", "why_start")]
    assert service.api("PUT", "/v1/projects/why_shop/draft", json={"pins": pins}).status_code == 200
    assert service.api("POST", "/v1/projects/why_shop/publish").status_code == 201
    assert service.api("POST", "/v1/projects/why_shop/draft").status_code == 201
    pins = [{"tool": "why_plain", "version": 1}, {"tool": "why_beta", "version": "draft"}]
    assert service.api("PUT", "/v1/projects/why_shop/draft", json={"pins": pins}).status_code == 200
    assert service.api("POST", "/v1/tools/why_beta/publish").status_code == 201
    return "why_shop"


def explain(person, version="why_shop:1", subject="alice", entitlements="", anonymous=False):
    form = {"op": "explain", "version": version, "subject": subject, "entitlements": entitlements}
    if anonymous:
        form["anonymous"] = "on"
    return person.post("/playground", form)


def api_reasons(service, query: str) -> dict[str, dict[str, str]]:
    response = service.api("GET", f"/v1/projects/why_shop/why-not-offered?{query}")
    assert response.status_code == 200, response.text
    return {t["tool"]: {r["reason"]: r["message"] for r in t["reasons"]} for t in response.json()["tools"]}


def test_each_tool_says_whether_it_is_offered_and_why_not(service, admin, why_project):
    page = explain(admin)
    assert page.status == 200
    rows = shown(page)
    assert list(rows) == ["why_plain", "why_entitled", "why_start", "why_beta", "why_stock"]  # pinned first
    assert rows["why_plain"] == {"pinned": "Version 1", "offered": "Offered", "reasons": {}}
    assert list(rows["why_entitled"]["reasons"]) == ["entitlement-missing"]
    assert ENTITLEMENT in rows["why_entitled"]["reasons"]["entitlement-missing"]
    assert rows["why_start"]["offered"] == "Not offered Runs at session start for these claims"
    assert list(rows["why_start"]["reasons"]) == ["session-start-only"]
    assert rows["why_stock"] == {"pinned": "Not pinned", "offered": "Not offered",
                                 "reasons": {"not-pinned": "This project version does not pin the tool."}}
    # Word for word what the API says for the same version and claims.
    assert {tool: row["reasons"] for tool, row in rows.items()} == api_reasons(service, "version=1&subject=alice")
    assert page.text_of("why-for") == "For why_shop version 1 · subject alice · entitlements none"


def test_an_entitlement_in_the_claims_offers_the_tool_that_requires_it(service, admin, why_project):
    rows = shown(explain(admin, entitlements=ENTITLEMENT))
    assert rows["why_entitled"] == {"pinned": "Version 1", "offered": "Offered", "reasons": {}}


def test_a_project_draft_pinning_a_tool_draft_published_since(service, admin, why_project):
    """Publishing why_beta on its own froze it for why_shop: the draft version now pins and offers version 1 (a pin
    left at a consumed draft, from before publishing moved pins, is explained as pinned-draft-missing: tests/ops)."""
    page = explain(admin, version="why_shop:draft", anonymous=True)
    rows = shown(page)
    assert rows["why_beta"] == {"pinned": "Version 1", "offered": "Offered", "reasons": {}}
    assert list(rows["why_start"]["reasons"]) == ["not-pinned"]
    assert "(anonymous)" in page.text_of("why-for")
    assert {t: r["reasons"] for t, r in rows.items()} == api_reasons(service, "version=draft&anonymous=true")


def test_explaining_opens_no_conversation(service, admin, why_project):
    before = service.api("GET", "/v1/calls", params={"tool": "why_start"}).json()["calls"]
    page = explain(admin)
    assert "data-conversation" not in page.text and "Session-start context" not in page.text
    assert service.api("GET", "/v1/calls", params={"tool": "why_start"}).json()["calls"] == before  # nothing ran
    assert 'data-focus-on-load>Why not offered</h2>' in page.text


def test_a_conversation_shows_the_panel_for_its_own_claims_and_it_agrees(admin, why_project):
    page = admin.post("/playground", {"version": "why_shop:1", "subject": "bob", "entitlements": ENTITLEMENT})
    assert page.text_of("flash") == "Conversation started."
    rows = shown(page)
    assert sorted(tool for tool, row in rows.items() if row["offered"] == "Offered") == sorted(offered(page))
    assert page.text_of("why-for") == f"For why_shop version 1 · subject bob · entitlements {ENTITLEMENT}"


def test_a_version_that_does_not_exist_is_refused(admin, why_project):
    page = explain(admin, version="why_shop:9")
    assert page.status == 404
    assert "data-error-summary><h2>No such project version.</h2>" in page.text
    assert 'id="why"' not in page.text


def test_the_panel_is_for_keys_that_may_use_the_playground(agent, why_project):
    assert explain(agent).status == 403


def test_the_tools_a_version_does_not_pin_fold_into_one_line_that_opens_on_their_names(admin, why_project):
    page = explain(admin)
    summary = re.search(r'<details class="unpinned" id="why-unpinned">\s*<summary>(.*?)</summary>', page.text, re.S)
    assert summary[1] == "2 tools are not pinned in this project version"  # why_beta and why_stock
    assert '<tr id="why-why_stock">' not in page.text  # no row of its own: the line opens on the names
    assert set(shown(page)) == {"why_plain", "why_entitled", "why_start", "why_beta", "why_stock"}
