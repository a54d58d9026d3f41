"""What a step costs the database, counted where it arrives: a one-call step of a known turn is one statement on
PostgreSQL (its record and its rollups, service.conversations.records), and on SQLite, in process, one transaction."""
import sqlite3
from urllib.parse import urlsplit

import pytest

from bench.statements import StatementCounter
from service.database import db
from tests.support.constants import POSTGRES_URL
from tests.support.definitions import tool
from tests.support.live import Conversation, live_service, mock_backend, publish_project

STEPS = 20


def run_steps(service, backend, count):
    """Open a conversation, run one step (the turn becomes known), then `count()` around STEPS more; per step."""
    publish_project(service, [tool("search", backend + "/tools/search/echo")])
    conversation = Conversation(service, service.session_token("alice"))
    turn = conversation.turn()
    conversation.step(turn, ("search", {}))
    before = count()
    for _ in range(STEPS):
        assert "output" in conversation.step(turn, ("search", {}))[0]
    return (count() - before) / STEPS


@pytest.mark.skipif(not POSTGRES_URL, reason="TOOLGATE_TEST_POSTGRES_URL is not set")
def test_on_postgresql_a_one_call_step_is_one_statement_its_record(tmp_path):
    from tests.support.databases import fresh_postgres_schema

    server = urlsplit(POSTGRES_URL)
    with fresh_postgres_schema(POSTGRES_URL) as url, StatementCounter((server.hostname, server.port or 5432)) as counter:
        with live_service(tmp_path, database_url=counter.url(url)) as service, mock_backend([service.issuer]) as backend:
            before = counter.snapshot()
            per_step = run_steps(service, backend, counter.total)
            seen = counter.snapshot() - before
    assert per_step == 1
    # The counter reads the real traffic: the record's INSERT, in a WITH before the rollups' upsert.
    assert seen["WITH"] >= STEPS and "SELECT" in seen


def test_on_sqlite_a_one_call_step_is_one_transaction_its_record_and_its_rollups(tmp_path, monkeypatch):
    statements = []
    with live_service(tmp_path) as service, mock_backend([service.issuer]) as backend:
        database = db.obj
        hooks = type(database)._add_conn_hooks

        def traced(self, conn: sqlite3.Connection):
            hooks(self, conn)
            conn.set_trace_callback(statements.append)

        monkeypatch.setattr(type(database), "_add_conn_hooks", traced)
        database.close_all()  # connections opened from here on are traced
        per_step = run_steps(service, backend, lambda: len(statements))
    assert per_step == 5  # BEGIN IMMEDIATE, the record, its counts' and its latencies' upserts, COMMIT
    assert any(s.startswith("INSERT INTO call_record") for s in statements)
    assert any(s.startswith("INSERT INTO call_rollup") for s in statements)
    assert any(s.startswith("INSERT INTO call_latency_rollup") for s in statements)
