"""Rows written in bulk for bench/scale.py, straight into the database of a running `toolgate serve`.

Tools are written as registration writes them (service.registry.tools.register_tool): the tool, its draft holding
the checked definition, an audit record `register` chained onto the organization's trail (its hash computed by
service.records.audit, so `toolgate audit verify` still passes); a third of them then published once (version 1,
its `publish` record, the draft gone) and another third published with a new draft started from it (`start-draft`).
Projects are created as `POST /v1/projects` creates them (the project, its empty draft, a `project-create` record)
and half the tools belong to one. They go through peewee's models, so a column another change adds with a default
is filled as the service fills it.

Call records are written as runs.py writes them, with created_at spread evenly over the past `days` days (oldest
first, so ids grow with time): executemany in big transactions on SQLite, COPY on PostgreSQL; then rolled up as
migration 0012 rolls up a log it finds (`roll_up`), which is what the service's writer would have added.
"""
from __future__ import annotations

import io
import random
import sqlite3
import time
from typing import Any, Iterator
from urllib.parse import urlparse

from peewee import PostgresqlDatabase

from service.database import db, make_database
from service.migrations import call_partitions, call_rollups
from service.models import Organization, Project, ProjectDraft, Tool, ToolDraft, ToolVersion
from service.records import audit
from service.records.tables import AuditHead, AuditRecord
from service.registry.rules import check_definition

#: Who the bulk rows say wrote them: the admin key's form of actor, with a key id of its own.
ACTOR = "person:admin:bench-bulk"
#: One project for every this many tools.
TOOLS_PER_PROJECT = 200
#: Rows per INSERT statement (peewee) and per transaction or COPY (call records).
TOOL_CHUNK = 500
CALL_CHUNK = 200_000
#: The call log's spread: distinct tools, subjects, and calls per conversation.
CALL_TOOLS = 200
CALL_SUBJECTS = 20_000
CALLS_PER_CONVERSATION = 8
#: Share of calls that failed, and which kinds (the rest succeeded: kind null).
FAILED = (("timed-out", 0.01), ("refused", 0.004), ("endpoint-error", 0.006))
CALL_COLUMNS = ("organization_id", "conversation_id", "turn", "tool", "tool_version", "subject", "anonymous", "kind",
                "http_code", "latency_ms", "size_chars", "jti", "approval", "session_start", "created_at")


def tool_name(i: int) -> str:
    return f"bulk_{i:06d}"


def project_name(i: int) -> str:
    return f"proj_{i:04d}"


def _definition(i: int) -> dict[str, Any]:
    words = ("orders", "invoices", "customers", "shipments", "refunds", "tickets", "stock", "prices")
    data = {"name": tool_name(i), "description": f"Reads the {words[i % len(words)]} of record {i}.",
            "method": "GET", "url": f"https://api.example.com/{words[i % len(words)]}/{i}", "scope": "shared",
            "parameters": [{"name": "q", "type": "string", "location": "query", "required": False}]}
    definition, found = check_definition(data)
    if definition is None:
        raise RuntimeError(f"the bulk definition breaks rules: {found}")
    return definition.to_dict()


class _Trail:
    """The organization's audit chain, extended in memory and written in bulk, then its head moved once."""

    def __init__(self, organization: Organization):
        self.organization = organization
        head = AuditHead.get_or_none(AuditHead.organization == organization.id)
        self.seq, self.hash = (head.seq, head.hash) if head else (0, audit.GENESIS)
        self.rows: list[dict[str, Any]] = []

    def add(self, action: str, object_type: str, name: str, *, version: int | None = None, before: Any = None,
            after: Any = None) -> None:
        row = AuditRecord(organization=self.organization.id, seq=self.seq + 1, created_at=round(time.time(), 6),
                          actor=ACTOR, action=action, object_type=object_type, object_name=name,
                          object_version=version, before_hash=audit.state_hash(before),
                          after_hash=audit.state_hash(after), prev_hash=self.hash)
        row.hash = audit.chain_hash(row)
        self.seq, self.hash = row.seq, row.hash
        self.rows.append(dict(row.__data__))

    def flush(self) -> None:
        _insert(AuditRecord, self.rows)
        self.rows = []
        AuditHead.insert(organization=self.organization.id, seq=0, hash=audit.GENESIS).on_conflict_ignore().execute()
        AuditHead.update(seq=self.seq, hash=self.hash).where(AuditHead.organization == self.organization.id).execute()


def _insert(model, rows: list[dict[str, Any]]) -> None:
    for start in range(0, len(rows), TOOL_CHUNK):
        model.insert_many(rows[start:start + TOOL_CHUNK]).execute()


#: The tables `write_tools` fills.
TOOL_TABLES = ("tool", "tool_draft", "tool_version", "project", "project_draft", "audit_record", "audit_head")


def write_tools(url: str, slug: str, first: int, last: int) -> None:
    """Tools `first` … `last - 1` (and the projects they need) into the organization `slug` at `url`."""
    database = make_database(url, pooled=False)
    db.initialize(database)
    try:
        with database.atomic():
            organization = Organization.get(Organization.slug == slug)
            trail = _Trail(organization)
            projects = _projects(organization, trail, -(-last // TOOLS_PER_PROJECT))
            for start in range(first, last, 5_000):
                _tools(organization, trail, projects, range(start, min(last, start + 5_000)))
            trail.flush()
        if isinstance(database, PostgresqlDatabase):
            # As autovacuum would soon after a tenth of a table changed (bench/call_log_rows.py does the same): a
            # registry that grew to 100k tools has statistics of them. Without, the planner guessed a rare search
            # matched hundreds and walked the name index through every tool. A served SQLite file is never analysed.
            for table in TOOL_TABLES:
                database.execute_sql(f"ANALYZE {table}")
    finally:
        database.close()


def _projects(organization: Organization, trail: _Trail, count: int) -> dict[str, int]:
    have = {p.name: p.id for p in Project.select().where(Project.organization == organization)}
    new = [project_name(i) for i in range(count) if project_name(i) not in have]
    _insert(Project, [{"organization": organization.id, "name": n, "created_at": time.time()} for n in new])
    have = {p.name: p.id for p in Project.select().where(Project.organization == organization)}
    _insert(ProjectDraft, [{"project": have[n], "pins": [], "revision": 1, "updated_at": time.time(),
                            "updated_by": ACTOR} for n in new])
    for name in new:
        trail.add(audit.PROJECT_CREATE, audit.PROJECT, name, after=[])
    return have


def _tools(organization: Organization, trail: _Trail, projects: dict[str, int], numbers: range) -> None:
    definitions = {i: _definition(i) for i in numbers}
    _insert(Tool, [{"organization": organization.id, "name": tool_name(i), "display_name": f"Bulk tool {i}",
                    "project": projects[project_name(i // TOOLS_PER_PROJECT)] if i % 2 else None,
                    "created_at": time.time()} for i in numbers])
    ids = {t.name: t.id for t in Tool.select(Tool.id, Tool.name).where(
        Tool.organization == organization, Tool.name.between(tool_name(numbers[0]), tool_name(numbers[-1])))}
    drafts, versions = [], []
    for i in numbers:
        tool, definition = ids[tool_name(i)], definitions[i]
        trail.add(audit.REGISTER, audit.TOOL, tool_name(i), after=definition)
        if i % 3:  # published once; every other of those has a new draft from version 1
            versions.append({"tool": tool, "number": 1, "definition": definition, "published_at": time.time(),
                             "published_by": ACTOR})
            trail.add(audit.PUBLISH, audit.TOOL, tool_name(i), version=1, after=definition)
        if i % 3 != 1:
            drafts.append({"tool": tool, "definition": definition, "revision": 1, "updated_at": time.time(),
                           "updated_by": ACTOR, "based_on": 1 if i % 3 else None})
            if i % 3:
                trail.add(audit.START_DRAFT, audit.TOOL, tool_name(i), version=1, after=definition)
    _insert(ToolVersion, versions)
    _insert(ToolDraft, drafts)


# ---------------------------------------------------------------- the call log

def call_tool(i: int) -> str:
    return f"called_{i % CALL_TOOLS:03d}"


def call_subject(i: int) -> str:
    return f"user-{i % CALL_SUBJECTS:05d}"


def _call_rows(organization_id: int, first: int, last: int, total: int, days: float) -> Iterator[tuple]:
    """Rows `first` … `last - 1` of a log of `total`, the oldest `days` days ago, the newest a minute ago."""
    rng = random.Random(first)
    end = time.time() - 60
    span = days * 86_400
    for i in range(first, last):
        draw = rng.random()
        kind = None
        for name, share in FAILED:
            if draw < share:
                kind = name
                break
            draw -= share
        conversation = f"conv-{i // CALLS_PER_CONVERSATION:09d}"
        yield (organization_id, conversation, f"turn-{i // 2:09d}", call_tool(rng.randrange(CALL_TOOLS)), 1,
               call_subject(i // CALLS_PER_CONVERSATION), False, kind,
               None if kind == "timed-out" else (502 if kind else 200), round(rng.uniform(5, 400), 3),
               None if kind else rng.randrange(20, 2_000), f"jti-{i:012d}", None, False,
               end - span + span * i / max(1, total))


def write_calls(url: str, slug: str, first: int, last: int, total: int, days: float) -> None:
    """Call records `first` … `last - 1` of a log of `total` for `slug`, in transactions of CALL_CHUNK."""
    parsed = urlparse(url)
    if parsed.scheme == "sqlite":
        connection = sqlite3.connect(parsed.path[1:] if parsed.path.startswith("/") else parsed.path, timeout=60)
        try:
            org = connection.execute("SELECT id FROM organization WHERE slug = ?", (slug,)).fetchone()[0]
            sql = (f"INSERT INTO call_record ({', '.join(CALL_COLUMNS)}) "
                   f"VALUES ({', '.join('?' for _ in CALL_COLUMNS)})")
            for start in range(first, last, CALL_CHUNK):
                with connection:
                    connection.executemany(sql, _call_rows(org, start, min(last, start + CALL_CHUNK), total, days))
        finally:
            connection.close()
        return
    _partitions_for(url, days)
    import psycopg2

    connection = psycopg2.connect(url)  # `options` (the schema) is a libpq keyword too
    try:
        cursor = connection.cursor()
        cursor.execute("SELECT id FROM organization WHERE slug = %s", (slug,))
        org = cursor.fetchone()[0]
        for start in range(first, last, CALL_CHUNK):
            text = io.StringIO("".join(_copy_line(row) for row in
                                       _call_rows(org, start, min(last, start + CALL_CHUNK), total, days)))
            cursor.copy_expert(f"COPY call_record ({', '.join(CALL_COLUMNS)}) FROM STDIN", text)
            connection.commit()
    finally:
        connection.close()


def newest_call_id(url: str) -> int:
    """The id of the newest call record (0: none)."""
    database = make_database(url, pooled=False)
    with database.connection_context():
        return database.execute_sql("SELECT COALESCE(MAX(id), 0) FROM call_record").fetchone()[0]


def roll_up(url: str, after_id: int) -> None:
    """Roll up the call records past `after_id` as migration 0012 does (`call_rollups.backfill`)."""
    database = make_database(url, pooled=False)
    with database.connection_context():
        call_rollups.backfill(database, after_id=after_id)


def _partitions_for(url: str, days: float) -> None:
    """On a log partitioned by day (PostgreSQL, migration 0007), each day's partition the records fall in, made
    first as the service would have made it ahead, so they land in their days and not in the default partition."""
    database = make_database(url, pooled=False)
    with database.connection_context():
        if call_partitions.partitioned(database):
            now = time.time()
            for day in range(call_partitions.day_of(now - days * 86_400 - 60), call_partitions.day_of(now) + 1):
                call_partitions.create_day(database, day)


def _copy_line(row: tuple) -> str:
    return "\t".join("\\N" if v is None else ("t" if v else "f") if isinstance(v, bool) else str(v)
                     for v in row) + "\n"

