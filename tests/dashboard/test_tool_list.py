"""The Tools screen's list: searched, sorted and paged on the server, from the query string (plain data, then HTTP)."""
import re

import pytest

from service.dashboard import tool_list
from service.dashboard.tool_list import PAGE_SIZE, ListQuery, listing
from tests.dashboard.test_editor import register

pytestmark = pytest.mark.service(per_module=True)  # each test names its own tools

#: As many tools as the benchmarks' organizations have.
MANY = 500


def line(i: int, **changes) -> dict:
    return {"name": f"tool_{i:03}", "display_name": f"Tool {i:03}", "project": None, "latest": i % 7 or None,
            "draft": i % 2 == 0, "based_on": None,
            "definition": {"description": f"Reads record {i}.", "scope": "per_user" if i % 3 else "shared",
                           "runs_at_session_start": False, "required_entitlement": None}, **changes}


LINES = [line(i) for i in range(MANY)]


def test_a_page_holds_page_size_lines_and_says_which():
    first = listing(LINES, ListQuery())
    assert [t["name"] for t in first["lines"]] == [f"tool_{i:03}" for i in range(PAGE_SIZE)]
    assert (first["total"], first["page"], first["pages"], first["first"], first["last"]) == (MANY, 1, 10, 1, 50)
    last = listing(LINES, ListQuery(page=10))
    assert (last["first"], last["last"], last["lines"][-1]["name"]) == (451, 500, "tool_499")
    # A page past the end is the last page, not an empty one.
    assert listing(LINES, ListQuery(page=99))["page"] == 10


def test_a_search_looks_in_the_name_the_display_name_and_the_description_whatever_the_case():
    lines = [line(1, name="get_orders"), line(2, display_name="Customer ORDERS"),
             line(3, definition={**line(3)["definition"], "description": "Lists orders."}), line(4)]
    found = listing(lines, ListQuery(search="orders"))
    assert [t["name"] for t in found["lines"]] == ["get_orders", "tool_002", "tool_003"]
    assert listing(lines, ListQuery(search="nothing like it"))["lines"] == []


def test_each_column_sorts_both_ways_with_ties_by_name():
    by_latest = [t["name"] for t in listing(LINES[:14], ListQuery(sort="latest"))["lines"]]
    assert by_latest[:2] == ["tool_001", "tool_008"] and by_latest[-2:] == ["tool_000", "tool_007"]  # none last
    down = [t["name"] for t in listing(LINES[:14], ListQuery(sort="latest", order="desc"))["lines"]]
    assert down[2:4] == ["tool_006", "tool_013"]  # 6 is the highest version; ties stay by name
    for column in tool_list.COLUMNS:
        assert len(listing(LINES, ListQuery(sort=column, order="desc"))["lines"]) == PAGE_SIZE


def test_the_query_string_is_read_safely_and_links_keep_only_what_differs():
    query = ListQuery.from_args({"q": "  orders ", "sort": "drop table", "order": "sideways", "page": "-3"})
    assert query == ListQuery(search="orders")
    assert ListQuery.from_args({"page": "99999999999999999999"}).page == 1
    assert ListQuery(search="a", page=3).args(page=4) == {"q": "a", "page": 4}
    assert ListQuery(sort="latest").sorted_by("latest") == {"sort": "latest", "order": "desc"}
    assert ListQuery(sort="latest", order="desc", page=2).sorted_by("name") == {}


def names(page) -> list[str]:
    return re.findall(r'<th scope="row"><a href="/tools/\w+"><code>(\w+)</code>', page.text)


def test_the_tools_screen_pages_searches_and_sorts_by_its_links(service, admin, monkeypatch):
    monkeypatch.setattr(tool_list, "PAGE_SIZE", 2)  # the service runs in this process
    for name, label in (("list_a", "Zebra"), ("list_b", "Yak"), ("list_c", "Xerus")):
        register(admin, name, display_name=label)
    page = admin.get("/tools?q=list_")
    assert names(page) == ["list_a", "list_b"]
    assert page.text_of("tools-count") == "Tools 1–2 of 3 matching “list_”, sorted by tool name"
    assert 'href="/tools?q=list_&amp;page=2"' in page.text
    assert names(admin.get("/tools?q=list_&page=2")) == ["list_c"]
    by_label = admin.get("/tools?q=list_&sort=display_name")
    assert names(by_label) == ["list_c", "list_b"]
    assert '<th scope="col" aria-sort="ascending">' in by_label.text
    # The heading of the column sorted by links to the other way round, the search kept.
    assert 'href="/tools?q=list_&amp;sort=display_name&amp;order=desc"' in by_label.text
    assert admin.get("/tools?q=no_such_tool").text_of("tools-empty") == (
        "No tool has “no_such_tool” in its name, display name or description.")
