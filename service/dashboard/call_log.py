"""The Calls page: the organization's call log, filtered by a GET form, newest first, a page at a time.

Each row is `records.calls.call_view`, the same record the API answers with: what happened, never a body or a token.
"""
from __future__ import annotations

from flask import request

from service.dashboard.call_filters import BEFORE, call_filters
from service.dashboard.readable import version_called
from service.dashboard.web import READ_CALLS, blp, page, principal, requires
from service.limits import CALL_COUNT_BOUND, DASHBOARD_PAGE_SIZE
from service.records import calls

#: Calls shown per page; one more is asked for, to know whether an older page exists. A module name of its own, so
#: a test can shorten the page.
PAGE_SIZE = DASHBOARD_PAGE_SIZE
#: The most matching calls the page counts ("more than" past it); a module name of its own, as PAGE_SIZE.
COUNT_BOUND = CALL_COUNT_BOUND


@blp.get("/calls")
@requires(READ_CALLS)
def call_log():
    """Every call, session-start ones included, by conversation, turn, tool, subject, kind and time."""
    filters = call_filters(request.args, PAGE_SIZE + 1)
    context = {"filters": filters.active(), "values": filters.values, "kinds": calls.KINDS,
               "paged": filters.query.before_id is not None, "version_called": version_called}
    if filters.violations:
        return page("calls.html", 422, violations=filters.violations, rows=None, older=None, **context)
    organization = principal().organization
    found = calls.find_calls(organization, filters.query)
    rows = [calls.call_view(row) for row in found[:PAGE_SIZE]]
    older = {**filters.active(), BEFORE: rows[-1]["id"]} if len(found) > PAGE_SIZE else None
    # Counted only when there is more than this page to count, and never past the bound: a walk of at most 10,001
    # index entries, never a count of the log.
    matching = calls.count_calls(organization, filters.query, COUNT_BOUND) if older or context["paged"] else len(rows)
    return page("calls.html", rows=rows, older=older, matching=matching, bound=COUNT_BOUND, **context)
