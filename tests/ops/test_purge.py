"""Retention: old call records are purged, recent ones kept, by a command that is safe while the service serves."""
import os
import subprocess
import sys
import time
from pathlib import Path

from service.cli import main
from service.database import db
from service.limits import SECONDS_PER_DAY
from service.models import CallRecord
from service.records.calls import purge
from service.registry import get_organization
from tests.support.definitions import tool
from tests.support.live import converse, live_service, publish_project

ROOT = Path(__file__).parents[2]


def fill(org_id, count, age_days, tool_name="old"):
    created = time.time() - age_days * SECONDS_PER_DAY
    rows = [{"organization": org_id, "conversation_id": "c", "turn": "t", "tool": tool_name, "subject": "s",
             "anonymous": False, "latency_ms": 1.0, "session_start": False, "created_at": created}
            for _ in range(count)]
    with db.atomic():
        for at in range(0, count, 500):
            CallRecord.insert_many(rows[at:at + 500]).execute()


def remaining():
    return {tool: CallRecord.select().where(CallRecord.tool == tool).count() for tool in ("old", "recent", "edge")}


def test_purge_removes_only_records_past_retention_in_batches(app, keys):
    with db.connection_context():
        org = get_organization("acme").id
        fill(org, 250, 31)
        fill(org, 20, 29, "recent")
        fill(org, 3, 30.01, "edge")
        assert purge(30, batch=100) == 253  # three batches of 100, then one short
        assert remaining() == {"old": 0, "recent": 20, "edge": 0}
        assert purge(30) == 0


def test_the_command_uses_the_configured_retention_or_days(app, keys, database_url, capsys):
    with db.connection_context():
        org = get_organization("acme").id
        fill(org, 5, 31)
        fill(org, 4, 8, "recent")
    assert main(["calls", "purge", "--database", database_url]) == 0
    assert "purged 5 call records older than 30 days" in capsys.readouterr().out
    assert main(["calls", "purge", "--days", "7", "--database", database_url]) == 0
    assert "purged 4 call records older than 7 days" in capsys.readouterr().out
    assert main(["calls", "purge", "--days", "-1", "--database", database_url]) == 2


def test_purging_while_the_service_serves_loses_no_new_call(tmp_path, database_url):
    """The purge runs as its own process, as an operator would run it, while calls are recorded meanwhile."""
    with live_service(tmp_path, database_url=database_url) as service:
        with db.connection_context():
            fill(get_organization(service.org).id, 1000, 40)
        publish_project(service, [tool("recent", "http://127.0.0.1:9/x")])  # the address guard allows it: refused port
        token = service.session_token()
        purger = subprocess.Popen(
            [sys.executable, "-m", "service.entry", "calls", "purge", "--batch", "50", "--database", database_url],
            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env={**os.environ, "PYTHONPATH": str(ROOT)})
        steps, deadline = 0, time.monotonic() + 30
        while purger.poll() is None and time.monotonic() < deadline:
            converse(service, token, ("recent", {}), ("recent", {}))  # raises on any failed request
            steps += 1
        out, err = purger.communicate(timeout=30)
        assert purger.returncode == 0, err
        assert steps >= 1  # the service recorded calls while the purge ran
        assert "purged 1000 call records older than 30 days" in out
        converse(service, token, ("recent", {}))
        with db.connection_context():
            assert remaining()["old"] == 0
            assert remaining()["recent"] == 2 * steps + 1
