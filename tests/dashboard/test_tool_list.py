"""The Tools screen's list: searched, sorted and paged in the database, from the query string (the database's part is
tests/registry/test_tool_lines.py, on both engines)."""
import re

import pytest

from service.catalogue import RULES
from service.dashboard import tool_list
from service.dashboard.tool_list import ListQuery
from tests.dashboard.test_editor import register

pytestmark = pytest.mark.service(per_module=True)  # each test names its own tools

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


def test_pages_link_to_the_next_and_previous_and_a_page_past_the_end_is_the_last(service, admin, monkeypatch):
    monkeypatch.setattr(tool_list, "PAGE_SIZE", 2)
    for name in ("paged_a", "paged_b", "paged_c", "paged_d", "paged_e"):
        register(admin, name)
    second = admin.get("/tools?q=paged_&page=2")
    assert names(second) == ["paged_c", "paged_d"]
    assert 'rel="prev" href="/tools?q=paged_"' in second.text
    assert 'rel="next" href="/tools?q=paged_&amp;page=3"' in second.text
    assert "Page 2 of 3" in second.text
    last = admin.get("/tools?q=paged_&page=99")
    assert names(last) == ["paged_e"] and 'rel="next"' not in last.text and "Page 3 of 3" in last.text
    down = admin.get("/tools?q=paged_&sort=name&order=desc")
    assert names(down) == ["paged_e", "paged_d"]


def test_past_the_counted_tools_the_count_says_more_than(service, admin, monkeypatch):
    from service.registry import lines

    monkeypatch.setattr(tool_list, "PAGE_SIZE", 2)
    monkeypatch.setattr(tool_list, "COUNTED", 2)
    monkeypatch.setattr(lines, "COUNTED", 2)
    for name in ("counted_a", "counted_b", "counted_c"):
        register(admin, name)
    page = admin.get("/tools?q=counted_")
    assert page.text_of("tools-count").startswith("Tools 1–2 of more than 2 matching")
    assert "Page 1</span>" in page.text and 'rel="next"' in page.text


def test_unpublished_tools_sort_last_by_latest_version_both_ways(service, admin):
    for name in ("latest_a", "latest_b", "latest_c"):
        register(admin, name)
    for name in ("latest_a", "latest_c"):
        admin.post(f"/tools/{name}/publish")
    admin.post("/tools/latest_c/draft/new")
    admin.post("/tools/latest_c/publish")  # latest_c is at version 2, latest_a at 1, latest_b unpublished
    assert names(admin.get("/tools?q=latest_&sort=latest")) == ["latest_a", "latest_c", "latest_b"]
    assert names(admin.get("/tools?q=latest_&sort=latest&order=desc")) == ["latest_c", "latest_a", "latest_b"]


def test_a_reserved_word_is_refused_by_the_register_form_beside_the_name(service, admin):
    page = register(admin, "new")
    assert page.status == 422
    assert page.error_at("f-name") == "Error: " + RULES["name-reserved"]
    assert names(admin.get("/tools?q=new")) == []
