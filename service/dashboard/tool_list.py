"""The Tools screen's list: the query string in (search, sort, page), one page of lines out.

No Flask here. Organizations have thousands of tools, so the screen searches, sorts and pages in the database
(`service.registry.lines`), and every view of it is a link (`?q=orders&sort=latest&order=desc&page=2`) that one can
share or go back to.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from service.limits import DASHBOARD_PAGE_SIZE, MAX_SEARCH_CHARS, MAX_STORED_INTEGER
from service.models import Organization
from service.registry.lines import COUNTED, LineFilter, line_page
from service.text import whole_number

#: Tools shown per page (a module name of its own, so a test can shorten the page).
PAGE_SIZE = DASHBOARD_PAGE_SIZE
#: What a search looks in.
SEARCHED = ("name", "display_name", "description")
ASCENDING, DESCENDING = "asc", "desc"
DEFAULT_SORT = "name"

#: Each column one can sort by: its key in the query string and its heading (`service.registry.lines` sorts).
COLUMNS: dict[str, str] = {
    "name": "Tool name",
    "display_name": "Display name",
    "project": "Project",
    "scope": "Scope",
    "session_start": "Session start",
    "entitlement": "Entitlement",
    "latest": "Latest version",
    "draft": "Draft",
}


#: The columns the table shows; the rest fold into each tool's details row (issue 36: all eight scrolled sideways at
#: 1280 px).
SHOWN_COLUMNS = ("name", "display_name", "project", "latest", "draft")


@dataclass(frozen=True)
class ListQuery:
    """What the screen was asked for, each part already made safe to use (an unknown sort is the default one)."""

    search: str = ""
    sort: str = DEFAULT_SORT
    order: str = ASCENDING
    page: int = 1

    @classmethod
    def from_args(cls, args: Mapping[str, str]) -> "ListQuery":
        sort = args.get("sort") or DEFAULT_SORT
        order = args.get("order") or ASCENDING
        return cls(search=(args.get("q") or "").strip()[:MAX_SEARCH_CHARS],
                   sort=sort if sort in COLUMNS else DEFAULT_SORT,
                   order=order if order in (ASCENDING, DESCENDING) else ASCENDING,
                   page=whole_number((args.get("page") or "").strip(), MAX_STORED_INTEGER) or 1)

    def args(self, **changes: Any) -> dict[str, Any]:
        """This query as the query string carries it, with `changes`; defaults are left out of links."""
        values = {"q": self.search, "sort": self.sort, "order": self.order, "page": self.page, **changes}
        defaults = {"q": "", "sort": DEFAULT_SORT, "order": ASCENDING, "page": 1}
        return {k: v for k, v in values.items() if v != defaults[k]}

    def sorted_by(self, column: str) -> dict[str, Any]:
        """The link of a column's heading: sorted by it, the other way round when it already is; from page 1."""
        order = DESCENDING if column == self.sort and self.order == ASCENDING else ASCENDING
        return self.args(sort=column, order=order, page=1)


def listing(organization: Organization, which: LineFilter, query: ListQuery) -> dict[str, Any]:
    """One page of the tools that match, sorted (ties by tool name); with the counts the page shows. A page past the
    end is the last page; past COUNTED matching tools the count says "more than" and pages are not numbered."""
    def fetch(page: int):
        return line_page(organization, which, sort=query.sort, descending=query.order == DESCENDING,
                         offset=(page - 1) * PAGE_SIZE, limit=PAGE_SIZE + 1)

    page = query.page
    found = fetch(page)
    capped = found.total > COUNTED
    pages = None if capped else max(1, -(-found.total // PAGE_SIZE))
    if pages is not None and page > pages:
        page = pages
        found = fetch(page)
    lines = found.lines[:PAGE_SIZE]
    start = (page - 1) * PAGE_SIZE
    return {"lines": lines, "total": min(found.total, COUNTED), "more_than": capped, "page": page, "pages": pages,
            "has_next": len(found.lines) > PAGE_SIZE, "first": start + 1 if lines else 0,
            "last": start + len(lines)}
