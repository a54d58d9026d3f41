"""The plain parts of the operations pages: reading the call log's filters, and wording records and diffs."""
from datetime import datetime, timezone

import pytest

from service.catalogue import RULES
from service.dashboard.call_filters import call_filters, parse_time
from service.dashboard.readable import (
    ADDED,
    CONTEXT,
    HEADER,
    HUNK,
    REMOVED,
    breaks,
    compare_choices,
    default_pair,
    diff_lines,
    history_entry,
    version_called,
    version_ref,
)
from service.ops.changes import text_diff
from service.records import audit

NOON = datetime(2026, 1, 2, 12, 0, tzinfo=timezone.utc).timestamp()


def test_a_time_is_read_as_utc_with_or_without_seconds():
    assert parse_time("2026-01-02T12:00") == NOON
    assert parse_time("2026-01-02T12:00:30") == NOON + 30
    assert parse_time("2026-01-02 12:00") == NOON  # as typed where the browser has no datetime picker
    with pytest.raises(ValueError):
        parse_time("noon")


def test_blank_filters_filter_nothing():
    filters = call_filters({"tool": "  ", "kind": ""}, 51)
    assert filters.violations == [] and filters.active() == {}
    query = filters.query
    assert (query.tool, query.kind, query.since, query.until, query.before_id, query.limit) == (
        None, None, None, None, None, 51)


def test_every_filter_reaches_the_query():
    args = {"conversation": "c1", "turn": "t1", "tool": "get_orders", "subject": " alice ", "kind": "refused",
            "from": "2026-01-02T12:00", "to": "2026-01-02T12:01", "before": "40"}
    filters = call_filters(args, 10)
    query = filters.query
    assert (query.conversation, query.turn, query.tool, query.subject, query.kind) == (
        "c1", "t1", "get_orders", "alice", "refused")
    assert (query.since, query.until, query.before_id) == (NOON, NOON + 60, 40)
    assert "before" not in filters.active() and filters.active()["subject"] == "alice"


def test_every_problem_with_the_filters_is_reported_at_once():
    filters = call_filters({"from": "soon", "to": "later", "kind": "exploded"}, 10)
    assert [(v.field, v.message) for v in filters.violations] == [
        ("from", RULES["time-format"]), ("to", RULES["time-format"]), ("kind", RULES["kind-unknown"])]
    backwards = call_filters({"from": "2026-01-02T12:00", "to": "2026-01-02T12:00"}, 10)
    assert [(v.field, v.message) for v in backwards.violations] == [("to", RULES["time-order"])]


def test_a_page_marker_that_is_not_a_number_starts_from_the_newest():
    assert call_filters({"before": "12; drop"}, 10).query.before_id is None


def record(actor: str, action: str, version=None) -> dict:
    kind, role, key_id = actor.split(":")
    return {"seq": 3, "at": NOON, "action": action, "actor": {"kind": kind, "role": role, "key_id": key_id},
            "object": {"type": "tool", "name": "t", "version": version}}


@pytest.mark.parametrize("actor, action, version, expected", [
    ("person:admin:ab12", audit.PUBLISH, 2, ("Person", "admin key ab12", "Published version 2", False)),
    ("agent:agent:cd34", audit.START_DRAFT, 1, ("Agent", "agent key cd34", "Started a new draft from version 1", True)),
    ("agent:agent:cd34", audit.SAVE, None, ("Agent", "agent key cd34", "Saved the draft", True)),
    (audit.CLI_ACTOR, audit.RELABEL, None, ("Person", "the command line", "Changed the display name", False)),
    ("person:admin:ab12", audit.REGISTER, None, ("Person", "admin key ab12", "Registered the tool", False)),
])
def test_a_history_entry_says_who_did_what(actor, action, version, expected):
    entry = history_entry(record(actor, action, version))
    assert (entry["who"], entry["how"], entry["what"], entry["agent"]) == expected


def test_each_diff_line_is_marked_for_what_it_is():
    before = {"method": "GET", "description": "-- dashes"}
    after = {"method": "POST", "description": "-- dashes"}
    kinds = [kind for kind, _ in diff_lines(text_diff(before, after, "t v1", "t (draft)"))]
    assert kinds == [HEADER, HEADER, HUNK, CONTEXT, CONTEXT, REMOVED, ADDED, CONTEXT]
    # A removed line that itself starts with "--" is still a removed line, not a header.
    assert diff_lines("--- a\n+++ b\n@@ -1 +1 @@\n--- x\n+++ y") == [
        (HEADER, "--- a"), (HEADER, "+++ b"), (HUNK, "@@ -1 +1 @@"), (REMOVED, "--- x"), (ADDED, "+++ y")]
    assert diff_lines("") == []


def test_who_a_breaking_change_breaks():
    assert breaks(["model", "endpoint"]) == "Breaks the model and the endpoint."
    assert breaks(("endpoint",)) == "Breaks the endpoint."


@pytest.mark.parametrize("text, ref", [("draft", "draft"), ("3", 3), (" 12 ", 12), ("0", None), ("-1", None),
                                       ("", None), (None, None), ("v1", None), ("١", None)])
def test_a_version_reference_is_a_number_or_draft(text, ref):
    assert version_ref(text) == ref


def history(draft: bool, *numbers: int) -> dict:
    """A tool's page data: a draft or not, and these published versions."""
    return {"draft": {"revision": 1} if draft else None, "versions": [{"version": n} for n in numbers]}


def test_the_compare_form_offers_the_draft_then_the_newest_versions():
    assert compare_choices(history(True, 1, 2)) == [("draft", "Draft"), ("2", "Version 2"), ("1", "Version 1")]
    assert compare_choices(history(False, 1)) == [("1", "Version 1")]


@pytest.mark.parametrize("shape, pair", [((True, 1, 2), (2, "draft")), ((False, 1, 2, 3), (2, 3)),
                                         ((True,), None), ((False, 1), None)])
def test_the_compare_form_starts_on_the_latest_change(shape, pair):
    assert default_pair(history(*shape)) == pair


def test_the_version_a_logged_call_called():
    assert version_called({"version": 3, "kind": "ok"}) == "3"
    assert version_called({"version": None, "kind": "refused"}) == "draft"
    assert version_called({"version": None, "kind": "unknown-tool"}) == "none"
