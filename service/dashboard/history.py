"""A tool's history, a readable diff between any two of its versions, and the project versions that pin a version.

The facts come from `service.ops` (the audit trail, `impact.diff`, `impact.version_impact`) exactly as the REST API
serves them; these views only choose what to ask for and `readable` words the answers.
"""
from __future__ import annotations

from typing import Any

from flask import request

from service import registry
from service.catalogue import violation
from service.dashboard.readable import compare_choices, default_pair, diff_lines, history_entry, ref_label, version_ref
from service.dashboard.web import READ, blp, page, principal, requires
from service.limits import MAX_STORED_INTEGER
from service.ops import impact
from service.records import audit
from service.text import whole_number

#: How many of its latest changes a tool's page shows; the history page shows the rest, this many at a time.
HISTORY_ON_TOOL_PAGE = 10
HISTORY_PAGE = 50
COMPARED = ("from", "to")



def _org():
    return principal().organization


def _history(name: str, limit: int, before_seq: int | None = None) -> tuple[list[dict[str, Any]], int | None]:
    """Up to `limit` of the tool's changes, newest first, and the `seq` to page on from (None: no older ones)."""
    rows = audit.history(_org(), object_type=audit.TOOL, object_name=name, before_seq=before_seq, limit=limit + 1)
    entries = [history_entry(audit.record_view(row)) for row in rows[:limit]]
    return entries, (entries[-1]["seq"] if len(rows) > limit else None)


def compare_form(tool: dict[str, Any], chosen: dict[str, str] | None = None) -> dict[str, Any]:
    """The compare form: every version one can pick, and what is picked (as asked, or the default pair)."""
    if chosen is None:
        pair = default_pair(tool)
        chosen = dict(zip(COMPARED, map(str, pair))) if pair else {}
    return {"choices": compare_choices(tool), "chosen": chosen}


def tool_extras(tool: dict[str, Any], number: int | None = None) -> dict[str, Any]:
    """What a tool's page shows under its definition: its latest changes and the compare form; on a published
    version's page, the project versions (and drafts) that pin it."""
    entries, older = _history(tool["name"], HISTORY_ON_TOOL_PAGE)
    return {"history": entries, "more_history": older is not None, "compare": compare_form(tool),
            "pinned_by": impact.version_impact(_org(), tool["name"], number) if number is not None else None}


@blp.get("/tools/<name>/history")
@requires(READ)
def tool_history(name: str):
    """Every change to the tool, newest first, a page at a time: who (person or agent, and which key), what, when."""
    tool = registry.tool_view(registry.get_tool(_org(), name))
    before_seq = whole_number(request.args.get("before", ""), MAX_STORED_INTEGER)  # anything else: the first page
    entries, older = _history(name, HISTORY_PAGE, before_seq)
    return page("history.html", tool=tool, entries=entries, older=older, paged=before_seq is not None)


@blp.get("/tools/<name>/compare")
@requires(READ)
def compare(name: str):
    """Any two versions of the tool side by side: the change list, breaking ones flagged, and a line diff."""
    tool = registry.tool_view(registry.get_tool(_org(), name))
    asked = {field: request.args.get(field, "") for field in COMPARED}
    form = compare_form(tool, asked)
    offered = {value for value, _ in form["choices"]}
    refs = {field: version_ref(value) for field, value in asked.items()}
    problems = [violation(field, "version-format") for field, ref in refs.items() if ref is None]
    problems += [violation(field, "version-missing") for field, ref in refs.items()
                 if ref is not None and str(ref) not in offered]
    if problems:
        return page("compare.html", 422, violations=problems, tool=tool, compare=form, result=None)
    known = {field: ref for field, ref in refs.items() if ref is not None}  # every one: a None is a problem above
    result = impact.diff(_org(), name, known["from"], known["to"])
    return page("compare.html", tool=tool, compare=form, result=result, lines=diff_lines(result["text"]),
                labels={field: ref_label(ref) for field, ref in known.items()})
