"""The Tools screen's lines, searched, sorted and paged by the database, on both engines: each with the definition
being worked on; every sort as the screen always sorted (blanks and "none" last going up, ties by name)."""
import pytest

from service import registry
from service.database import db
from service.registry.lines import LAST_BOTH_WAYS, LineFilter, line_page
from tests.registry.test_tools_api import ORDERS

EVERY = LineFilter()


def names(organization, which=EVERY, **how) -> list[str]:
    how = {"sort": "name", "descending": False, "offset": 0, "limit": 100, **how}
    return [line["name"] for line in line_page(organization, which, **how).lines]


def test_each_line_has_the_drafts_settings_or_else_the_latest_versions(app):
    with db.connection_context():
        acme = registry.create_organization("lines")
        registry.create_project(acme, "shop", "test")
        registry.register_tool(acme, {**ORDERS, "name": "a_draft_only", "project": "shop"}, "test")
        registry.register_tool(acme, {**ORDERS, "name": "b_published"}, "test")
        registry.publish_tool(acme, "b_published", "test")
        redrafted = {**ORDERS, "name": "c_redrafted"}
        registry.register_tool(acme, redrafted, "test")
        registry.publish_tool(acme, "c_redrafted", "test")
        registry.start_draft(acme, "c_redrafted", "test")
        registry.publish_tool(acme, "c_redrafted", "test")
        registry.start_draft(acme, "c_redrafted", "test")
        registry.save_draft(acme, "c_redrafted", {**redrafted, "description": "Being worked on."}, "test")
        page = line_page(acme, LineFilter(), sort="name", descending=False, offset=0, limit=10)
    lines = {line["name"]: line for line in page.lines}
    assert list(lines) == ["a_draft_only", "b_published", "c_redrafted"] and page.total == 3
    assert [(line["project"], line["latest"], line["draft"], line["based_on"]) for line in lines.values()] == [
        ("shop", None, True, None), (None, 1, False, None), (None, 2, True, 2)]
    assert lines["b_published"]["definition"]["description"] == ORDERS["description"]
    assert lines["c_redrafted"]["definition"]["description"] == "Being worked on."


@pytest.fixture
def shelf(app):
    """Six tools whose columns differ: labels, projects, scope, session start, entitlement, versions, drafts."""
    with db.connection_context():
        org = registry.create_organization("shelf")
        registry.create_project(org, "shop", "test")
        shared = {**ORDERS, "scope": "shared", "url": "https://api.example.com/orders",
                  "parameters": [{"name": "status", "type": "string", "location": "query", "required": False}]}
        for name, extra in (("Alpha", {"display_name": "zulu", "project": "shop"}),
                            ("bravo", {**shared, "description": "Finds ORDERS by status."}),
                            ("charlie", {**shared, "required_entitlement": "orders:read"}),
                            ("delta", {**ORDERS, "runs_at_session_start": True,
                                       "parameters": ORDERS["parameters"][:1]}),
                            ("echo", {"display_name": "Echo orders"}),
                            ("foxtrot", {"required_entitlement": "a:b"})):
            registry.register_tool(org, {**ORDERS, **extra, "name": name}, "test")
        for name, times in (("bravo", 2), ("charlie", 1), ("echo", 1)):
            for i in range(times):
                if i:
                    registry.start_draft(org, name, "test")
                registry.publish_tool(org, name, "test")
        registry.start_draft(org, "echo", "test")
        yield org


def _text(value):
    return (1, "") if not value else (0, str(value).casefold())


#: The screen's sorts as it did them in Python before the database did them: the oracle the database must agree with.
ORACLE = {
    "name": lambda t: _text(t["name"]),
    "display_name": lambda t: _text(t["display_name"]),
    "project": lambda t: _text(t["project"]),
    "scope": lambda t: t["definition"].get("scope") == "per_user",
    "session_start": lambda t: bool(t["definition"].get("runs_at_session_start")),
    "entitlement": lambda t: _text(t["definition"].get("required_entitlement")),
    "latest": lambda t: (t["latest"] is None, t["latest"] or 0),
    "draft": lambda t: (not t["draft"], t["based_on"] or 0),
}


@pytest.mark.parametrize("sort", list(ORACLE))
@pytest.mark.parametrize("descending", [False, True], ids=["up", "down"])
def test_every_column_sorts_in_the_database_as_the_screen_always_did(shelf, sort, descending):
    with db.connection_context():
        every = line_page(shelf, LineFilter(), sort="name", descending=False, offset=0, limit=10).lines
        found = names(shelf, sort=sort, descending=descending)
    expected = sorted(every, key=lambda t: _text(t["name"]))
    expected.sort(key=ORACLE[sort], reverse=descending)
    if sort in LAST_BOTH_WAYS:  # an unpublished tool is last going down too (issue 36); the sort is stable
        expected.sort(key=lambda t: t["latest"] is None)
    assert found == [t["name"] for t in expected]
    assert len({repr(ORACLE[sort](t)) for t in every}) > 1  # the column tells the tools apart


def test_a_page_is_an_offset_and_a_limit_and_the_count_is_bounded(shelf, monkeypatch):
    from service.registry import lines

    with db.connection_context():
        assert names(shelf, offset=2, limit=2) == ["charlie", "delta"]
        assert names(shelf, offset=6, limit=2) == []
        monkeypatch.setattr(lines, "COUNTED", 3)
        assert line_page(shelf, LineFilter(), sort="name", descending=False, offset=0, limit=2).total == 4


def test_filters_search_name_label_and_description_and_choose_a_projects_tools(shelf):
    with db.connection_context():
        assert names(shelf, LineFilter(search="orders by")) == ["bravo"]  # in a description, whatever the case
        assert names(shelf, LineFilter(search="echo ORD")) == ["echo"]  # in a display name
        assert names(shelf, LineFilter(search="ALPH")) == ["Alpha"]
        assert names(shelf, LineFilter(search="50%_")) == []  # wildcards are plain characters
        assert names(shelf, LineFilter(organization_wide=True)) == ["bravo", "charlie", "delta", "echo", "foxtrot"]
        shop = registry.get_project(shelf, "shop")
        assert names(shelf, LineFilter(project=shop)) == ["Alpha"]
        assert names(shelf, LineFilter(project=shop, pinned=frozenset({"echo"}))) == ["Alpha", "echo"]
