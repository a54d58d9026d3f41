"""Migration 0012 fills the rollups from the call log as it stands, to the row what the writer would have written."""
import time

from service.database import db
from service.latency import BOUNDS
from service.migrations import call_rollups, migrate
from service.models import CallRecord, Conversation, Project
from service.registry import get_organization

DAY = call_rollups.DAY


def rollups(table, columns):
    return sorted(tuple(row) for row in db.obj.execute_sql(f"SELECT {', '.join(columns)} FROM {table}").fetchall())


def test_the_migration_rolls_up_the_log_as_the_writer_would(api, keys):
    assert api("POST", "/v1/projects", json={"name": "shop"}).status_code == 201
    start = (int(time.time()) // DAY - 2) * DAY
    with db.connection_context():
        # Back to before 0012: no rollups, a log written without them.
        for statement in call_rollups.DROP:
            db.obj.execute_sql(statement)
        db.obj.execute_sql("DELETE FROM schema_migration WHERE number = 12")
        org = get_organization("acme")
        shop = Project.get(Project.organization == org.id, Project.name == "shop").id
        Conversation.create(id="c1", organization=org.id, project=shop, subject="s", anonymous=False, context=[])
        # Latencies on and about the histogram's bounds, so SQL and Python must put each in the same bucket.
        latencies = [0.0, 0.999, 1.0, BOUNDS[1], BOUNDS[1] - 1e-9, 2.0, 65_536.0, 100_000.0, 37.5]
        records = [{"organization": org.id, "conversation_id": "c1" if i % 3 else "gone", "turn": "t",
                    "tool": f"tool{i % 2}", "subject": "s", "anonymous": False,
                    "kind": None if i % 4 else "timed-out", "latency_ms": latency, "session_start": False,
                    "created_at": start + i * 7_001.5} for i, latency in enumerate(latencies * 4)]
        CallRecord.insert_many(records).execute()
        assert [m.number for m in migrate()] == [12]
        counts, latencies = call_rollups.rollup_rows([{**r, "project": shop if r["conversation_id"] == "c1" else None}
                                                      for r in records])
        assert rollups(call_rollups.TABLE, call_rollups.COLUMNS) == counts
        assert rollups(call_rollups.LATENCY_TABLE, call_rollups.LATENCY_COLUMNS) == latencies
        assert sum(row[-1] for row in counts if row[1] == DAY) == len(records)  # every call, once a width
        assert sum(sum(row[5:]) for row in latencies if row[1] == DAY) == len(records)
