"""The Tools screen's list as plain data: the query string in (search, sort, page), one page of lines out.

No Flask here. Organizations have hundreds of tools, so the screen searches, sorts and pages on the server, and every
view of it is a link (`?q=orders&sort=latest&order=desc&page=2`) that one can share or go back to.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping

from service.limits import DASHBOARD_PAGE_SIZE, MAX_STORED_INTEGER
from service.text import whole_number

#: Tools shown per page (a module name of its own, so a test can shorten the page).
PAGE_SIZE = DASHBOARD_PAGE_SIZE
#: What a search looks in.
SEARCHED = ("name", "display_name", "description")
#: The longest search the screen reads; a longer one is cut (no tool's text is searched past its own length anyway).
MAX_SEARCH_CHARS = 200
ASCENDING, DESCENDING = "asc", "desc"
DEFAULT_SORT = "name"


def _text(value: Any) -> tuple[int, str]:
    # Blanks sort last whichever way a column is sorted up; the rest alphabetically, whatever their case.
    return (1, "") if not value else (0, str(value).casefold())


#: Each column one can sort by: its key in the query string, its heading, and the sort key of a line.
COLUMNS: dict[str, tuple[str, Callable[[Mapping[str, Any]], Any]]] = {
    "name": ("Tool name", lambda t: _text(t["name"])),
    "display_name": ("Display name", lambda t: _text(t["display_name"])),
    "project": ("Project", lambda t: _text(t["project"])),
    "scope": ("Scope", lambda t: t["definition"].get("scope") == "per_user"),
    "session_start": ("Session start", lambda t: bool(t["definition"].get("runs_at_session_start"))),
    "entitlement": ("Entitlement", lambda t: _text(t["definition"].get("required_entitlement"))),
    "latest": ("Latest version", lambda t: (t["latest"] is None, t["latest"] or 0)),
    "draft": ("Draft", lambda t: (not t["draft"], t["based_on"] or 0)),
}


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


def matches(line: Mapping[str, Any], search: str) -> bool:
    """Whether a tool's name, display name or description holds the search, whatever the case."""
    wanted = search.casefold()
    texts = (line["name"], line["display_name"], line["definition"].get("description"))
    return any(wanted in (text or "").casefold() for text in texts)


def listing(lines: list[dict[str, Any]], query: ListQuery) -> dict[str, Any]:
    """One page of the lines that match the search, sorted (ties by tool name); with the counts the page shows."""
    found = [line for line in lines if matches(line, query.search)] if query.search else list(lines)
    found.sort(key=lambda t: _text(t["name"]))
    found.sort(key=COLUMNS[query.sort][1], reverse=query.order == DESCENDING)
    pages = max(1, -(-len(found) // PAGE_SIZE))
    page = min(query.page, pages)
    start = (page - 1) * PAGE_SIZE
    return {"lines": found[start:start + PAGE_SIZE], "total": len(found), "page": page, "pages": pages,
            "first": start + 1 if found else 0, "last": min(start + PAGE_SIZE, len(found))}
