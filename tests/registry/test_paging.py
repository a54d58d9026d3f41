"""Lists a page at a time, on both engines: tools, projects, the audit trail and a tool's history page by keyset to
the end with no gap and no repeat; filters, limits at their bounds, and bad arguments refused by field and rule.

How much a page costs is tests/registry/test_page_cost.py."""
import pytest

from service import registry
from service.catalogue import RULES
from service.database import db
from service.limits import MAX_PAGE
from service.registry import get_organization
from tests.registry.test_tools_api import ORDERS


def register(api, name: str, **extra) -> None:
    assert api("POST", "/v1/tools", {**ORDERS, "name": name, **extra}).status_code == 201


def walk(api, path: str, key: str, cursor: str = "after", **params) -> list[list[str]]:
    """Every page of `path`, following `next`: each page's names (or sequence numbers)."""
    pages, after = [], None
    while True:
        query = {**params, **({cursor: after} if after is not None else {})}
        answer = api("GET", path, query_string=query)
        assert answer.status_code == 200, answer.json
        items = answer.json[key]
        pages.append([item.get("name", item.get("seq")) for item in items])
        after = answer.json["next"]
        if after is None:
            return pages
        assert len(pages) < 50  # a next that never ends would loop


def test_tools_page_in_name_order_to_the_end_with_no_gap_or_repeat(api):
    names = [f"tool_{i:02d}" for i in (7, 3, 11, 0, 5, 9, 1)]
    for name in names:
        register(api, name)
    pages = walk(api, "/v1/tools", "tools", limit=3)
    assert pages == [["tool_00", "tool_01", "tool_03"], ["tool_05", "tool_07", "tool_09"], ["tool_11"]]
    first = api("GET", "/v1/tools?limit=3").json
    assert first["next"] == "tool_03" and set(first) == {"tools", "next"}
    # Each line is what GET /v1/tools/{name} answers.
    assert first["tools"][0] == api("GET", "/v1/tools/tool_00").json
    # An exact page: the last full page already says there is no next one.
    assert walk(api, "/v1/tools", "tools", limit=7) == [sorted(names)]
    assert api("GET", "/v1/tools").json["next"] is None  # the default page holds them all


def test_limits_at_their_bounds(api):
    for i in range(3):
        register(api, f"edge_{i}")
    assert walk(api, "/v1/tools", "tools", limit=1) == [["edge_0"], ["edge_1"], ["edge_2"]]
    assert walk(api, "/v1/tools", "tools", limit=MAX_PAGE) == [["edge_0", "edge_1", "edge_2"]]
    after_last = api("GET", "/v1/tools?after=edge_2").json
    assert after_last == {"tools": [], "next": None}
    assert api("GET", "/v1/tools?after=a").json["tools"][0]["name"] == "edge_0"  # after need not be a tool


def test_q_finds_name_or_display_name_whatever_the_case_and_project_narrows(api):
    assert api("POST", "/v1/projects", {"name": "shop"}).status_code == 201
    register(api, "get_orders", display_name="Orders")
    register(api, "list_items", display_name="Recent ORDERS", project="shop")
    register(api, "get_user", display_name="User")
    register(api, "orders_50_percent", display_name="Fifty")
    listed = api("GET", "/v1/tools?q=orders").json
    assert [t["name"] for t in listed["tools"]] == ["get_orders", "list_items", "orders_50_percent"]
    assert walk(api, "/v1/tools", "tools", q="ORDERS", limit=1) == [["get_orders"], ["list_items"],
                                                                      ["orders_50_percent"]]
    assert api("GET", "/v1/tools?q=50_").json["tools"][0]["name"] == "orders_50_percent"
    assert api("GET", "/v1/tools?q=5%25").json["tools"] == []  # % and _ are themselves, not wildcards
    assert [t["name"] for t in api("GET", "/v1/tools?project=shop").json["tools"]] == ["list_items"]
    assert api("GET", "/v1/tools?project=shop&q=user").json["tools"] == []
    assert api("GET", "/v1/tools?project=no-such").json == {"tools": [], "next": None}


def test_a_projects_pins_search_finds_only_what_it_may_pin_a_page_at_a_time(api):
    """What a project's pins page searches (issue 36): organization-wide tools and its own, never another
    project's, in name order by keyset; and the pinned names read in one look-up."""
    for project in ("shop", "other"):
        assert api("POST", "/v1/projects", {"name": project}).status_code == 201
    register(api, "pin_a")
    register(api, "pin_b", project="shop")
    register(api, "pin_c", project="other")
    register(api, "pin_d")
    with db.connection_context():
        organization = get_organization("acme")
        shop = registry.get_project(organization, "shop")
        first = registry.tool_page(organization, limit=2, q="PIN_", pinnable_in=shop)
        rest = registry.tool_page(organization, limit=2, q="pin_", after=first.next, pinnable_in=shop)
        named = registry.tools_named(organization, ["pin_d", "pin_a", "no_such"])
    assert ([t.name for t in first.rows], first.next) == (["pin_a", "pin_b"], "pin_b")
    assert ([t.name for t in rest.rows], rest.next) == (["pin_d"], None)
    assert sorted(t.name for t in named) == ["pin_a", "pin_d"]


@pytest.mark.parametrize("query, field, rule", [
    ("limit=0", "limit", "page-limit"),
    (f"limit={MAX_PAGE + 1}", "limit", "page-limit"),
    ("limit=-5", "limit", "page-limit"),
    ("limit=ten", "limit", "field-type"),
    ("after=" + "a" * 65, "after", "after-format"),
    ("after=a%00b", "after", "control-character"),
    ("q=" + "o" * 201, "q", "search-too-long"),
    ("q=%0A", "q", "control-character"),
    ("project=" + "p" * 65, "project", "project-name-format"),
    ("project=sh%1Bop", "project", "control-character"),
])
def test_bad_page_arguments_are_refused_by_field_and_rule(api, query, field, rule):
    answer = api("GET", f"/v1/tools?{query}")
    assert answer.status_code == 422
    assert answer.json["errors"] == [{"field": field, "rule": rule, "message": RULES[rule]}]


def test_projects_page_by_name(api):
    for name in ("delta", "alpha", "charlie", "bravo"):
        assert api("POST", "/v1/projects", {"name": name}).status_code == 201
    register(api, "pinned_tool")
    assert api("PUT", "/v1/projects/bravo/draft", {"pins": [{"tool": "pinned_tool", "version": "draft"}]}
               ).status_code == 200
    assert api("POST", "/v1/projects/bravo/publish").status_code == 201
    assert walk(api, "/v1/projects", "projects", limit=3) == [["alpha", "bravo", "charlie"], ["delta"]]
    first = api("GET", "/v1/projects?limit=2").json
    assert first["projects"][1] == api("GET", "/v1/projects/bravo").json  # the same view as one project's
    assert first["projects"][1]["versions"][0]["pins"] == [{"tool": "pinned_tool", "version": 1}]
    assert api("GET", "/v1/projects?limit=0").json["errors"][0]["rule"] == "page-limit"


def test_the_audit_trail_and_a_tools_history_page_newest_first(api):
    base = len(api("GET", "/v1/audit").json["records"])  # the organization's keys, made with it
    register(api, "audited")
    for i in range(4):
        assert api("PUT", "/v1/tools/audited/draft", {**ORDERS, "name": "audited",
                                                       "description": f"Edit {i}."}).status_code == 200
    register(api, "other")
    everything = walk(api, "/v1/audit", "records", cursor="before", limit=2)
    assert [seq for page in everything for seq in page] == list(range(base + 6, 0, -1))
    assert all(everything)  # no empty page at the end
    history = walk(api, "/v1/tools/audited/history", "records", cursor="before", limit=2)
    assert history == [[base + 5, base + 4], [base + 3, base + 2], [base + 1]]
    whole = api("GET", "/v1/tools/audited/history").json
    assert whole["next"] is None and len(whole["records"]) == 5
    assert api("GET", "/v1/tools/audited/history?limit=0").json["errors"][0]["field"] == "limit"
    saves = walk(api, "/v1/audit", "records", cursor="before", action="save", limit=3)
    assert saves == [[base + 5, base + 4, base + 3], [base + 2]]
