"""The call log's reads at any size: every combination of the API's filters is one range scan of an index, read in
the log's order, with no whole-table scan and no sort; and paging follows that order to the end, across days (on
PostgreSQL, across day partitions and the default one), with no record missed or shown twice."""
import itertools
import json

import pytest

from service.database import db
from service.limits import SECONDS_PER_DAY
from service.migrations import call_partitions
from service.models import CallRecord
from service.records.calls import OK, CallQuery, calls_select, count_calls, in_index_order, page_start_select
from service.registry import get_organization

#: A value for each filter, and the index each filter leads to when it is the narrowest set.
FILTERS = {"turn": "t1", "conversation": "c1", "subject": "alice", "tool": "get_orders", "kind": "timed-out",
           "since": 1.0, "until": 4e9, "before_id": None}
LEADS = {"turn": "turn", "conversation": "conversation", "subject": "subject", "tool": "tool", "kind": "kind"}
#: A day that starts at midnight UTC, some time ago.
DAY = 20_000 * SECONDS_PER_DAY


def row(org_id, at, **fields):
    values = {"organization": org_id, "conversation_id": "c1", "turn": "t1", "tool": "get_orders", "subject": "alice",
              "anonymous": False, "kind": None, "latency_ms": 1.0, "session_start": False, "created_at": at}
    values.update(fields)
    return values


def queries(before_id):
    """Every combination of the filters (the kind both a failure and "ok")."""
    names = list(FILTERS)
    for size in range(len(names) + 1):
        for combination in itertools.combinations(names, size):
            for kind in (("timed-out", OK) if "kind" in combination else (None,)):
                values = {name: FILTERS[name] for name in combination}
                if "kind" in combination:
                    values["kind"] = kind
                if "before_id" in combination:
                    values["before_id"] = before_id
                yield combination, CallQuery(**values)


def plan(database, select):
    """The plan's lines: SQLite's EXPLAIN QUERY PLAN, or each node of PostgreSQL's (type, relation, index)."""
    sql, params = select.sql()
    if not call_partitions.is_postgres(database):
        return [line[-1] for line in database.execute_sql("EXPLAIN QUERY PLAN " + sql, params).fetchall()]
    with in_index_order():
        tree = database.execute_sql("EXPLAIN (FORMAT JSON) " + sql, params).fetchone()[0]
    tree = json.loads(tree) if isinstance(tree, str) else tree
    nodes, stack = [], [tree[0]["Plan"]]
    while stack:
        node = stack.pop()
        nodes.append(f'{node["Node Type"]} {node.get("Relation Name", "")} {node.get("Index Name", "")}'.strip())
        stack.extend(node.get("Plans", []))
    return nodes


def test_every_filter_combination_is_one_index_range_scan_in_order(app, keys):
    with db.connection_context():
        org = get_organization("acme")
        CallRecord.insert_many([row(org.id, DAY + i) for i in range(3)]).execute()
        newest = CallRecord.select().order_by(CallRecord.id.desc()).first().id
        database = db.obj
        postgres = call_partitions.is_postgres(database)
        checked = 0
        for combination, query in queries(newest):
            lines = plan(database, calls_select(org, query))
            lead = next((LEADS[name] for name in combination if name in LEADS), "time")
            if postgres:
                assert not [n for n in lines if n.startswith(("Seq Scan", "Sort", "Incremental Sort", "Bitmap"))], \
                    (combination, lines)
                # PostgreSQL weighs the lead's index against the time index by its statistics (none, for a table
                # this small): either is a walk in order; no other filter's index can serve (`|| ''`).
                scans = [n for n in lines if n.startswith(("Index Scan", "Index Only Scan"))]
                indexes = ("organization_id_created_at_id", f"organization_id_{lead}")
                assert scans and all(any(i in n for i in indexes) for n in scans), (combination, lines)
            else:
                assert not [n for n in lines if n.startswith("SCAN") or "TEMP B-TREE" in n], (combination, lines)
                assert len(lines) == 1 and f"USING INDEX call_record_by_{lead} " in lines[0], (combination, lines)
            checked += 1
        assert checked == 384


def test_a_page_deep_in_the_log_finds_where_it_starts_by_the_primary_key_alone(app, keys):
    """`before` names a record by id: it is looked up in the primary key (on PostgreSQL, each day partition's), never
    by walking an index led by the organization, which the planner chose for partitions it thought small."""
    with db.connection_context():
        org = get_organization("acme")
        if call_partitions.partitioned(db.obj):
            for day in (20_000, 20_001):
                call_partitions.create_day(db.obj, day)
        CallRecord.insert_many([row(org.id, DAY + i * SECONDS_PER_DAY / 2) for i in range(6)]).execute()
        newest = CallRecord.select().order_by(CallRecord.id.desc()).first()
        database = db.obj
        lines = plan(database, page_start_select(newest.id))
        assert page_start_select(newest.id).first() == (newest.created_at, org.id)
    if call_partitions.is_postgres(database):
        indexes = [n for n in lines if "Index" in n]
        assert indexes and all(n.endswith("_pkey") for n in indexes), lines
        assert not [n for n in lines if n.startswith("Seq Scan")], lines
    else:
        assert lines == ["SEARCH t1 USING INTEGER PRIMARY KEY (rowid=?)"], lines


def test_a_broad_filter_never_leads_a_narrow_one(app, keys):
    """The filter whose index is walked is the narrowest set, in the order turn, conversation, subject, tool, kind;
    the others are only checked on the way (`|| ''` keeps any index from serving them)."""
    with db.connection_context():
        org = get_organization("acme")
    sql, _ = calls_select(org, CallQuery(tool="get_orders", conversation="c1", kind=OK)).sql()
    sql = sql.replace("%s", "?")  # PostgreSQL's placeholders as SQLite's
    assert '"t1"."conversation_id" = ' in sql
    assert "(\"t1\".\"tool\" || ?) = ?" in sql and "(\"t1\".\"kind\" || ?) IS NULL" in sql


@pytest.mark.parametrize("limit", [1, 4, 7])
def test_paging_reaches_the_end_across_days_with_no_gap_or_repeat(api, limit):
    """Records over three days (on PostgreSQL: two day partitions and, for the day without one, the default
    partition), several sharing a time at each day's edge; pages follow `next` to the end."""
    with db.connection_context():
        org = get_organization("acme").id
        if call_partitions.partitioned(db.obj):
            for day in (20_000, 20_001):
                call_partitions.create_day(db.obj, day)
        rows = []
        for day in range(3):
            edge = DAY + (day + 1) * SECONDS_PER_DAY
            rows += [row(org, edge - 0.5, tool="edge") for _ in range(3)]  # the last moments of a day, tied
            rows += [row(org, edge, tool="edge") for _ in range(2)]  # its next day's first
            rows += [row(org, DAY + day * SECONDS_PER_DAY + 3600 * h, tool=f"t{h % 2}") for h in range(5)]
        CallRecord.insert_many(rows).execute()
        every = [(r.created_at, r.id) for r in CallRecord.select().where(CallRecord.organization == org)]
    newest_first = [id_ for _, id_ in sorted(every, reverse=True)]
    for query, expected in (("", newest_first), ("&tool=edge", None), (f"&since={DAY + SECONDS_PER_DAY}", None)):
        seen, before = [], None
        while True:
            page = api("GET", f"/v1/calls?limit={limit}{query}" + (f"&before={before}" if before else "")).json
            seen += [c["id"] for c in page["calls"]]
            assert len(page["calls"]) <= limit
            before = page["next"]
            if before is None:
                break
        whole = api("GET", f"/v1/calls?limit=500{query}").json["calls"]
        assert seen == [c["id"] for c in whole] == (expected or seen)
        assert len(set(seen)) == len(seen) > 0
    assert len(newest_first) == 30


def test_a_count_stops_past_its_bound(app, keys):
    with db.connection_context():
        org = get_organization("acme")
        CallRecord.insert_many([row(org.id, DAY + i, tool="t" if i % 2 else "u") for i in range(30)]).execute()
        assert count_calls(org, CallQuery(), bound=7) == 8
        assert count_calls(org, CallQuery(tool="t"), bound=100) == 15
        assert count_calls(org, CallQuery(tool="t", before_id=10**9), bound=100) == 15  # the page is not counted
