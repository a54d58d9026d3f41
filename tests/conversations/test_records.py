"""Call records of steps that end together are written in one statement, and each step still waits for its own."""
import gevent
import gevent.event
import pytest

from service.conversations import records
from service.conversations.records import GroupWriter
from service.database import db, make_database
from service.errors import ServiceError
from service.models import CallRecord, Organization


class Inserts:
    """A stand-in for the database write: the batches it was given, optionally failing or slow."""

    def __init__(self, fail: Exception | None = None, seconds: float = 0.0) -> None:
        self.batches: list[list[dict]] = []
        self.fail, self.seconds = fail, seconds
        self.writing: list[list[dict]] = []  # every batch given, whether or not it was written
        self.started = gevent.event.Event()

    def __call__(self, rows):
        self.writing.append(list(rows))
        self.started.set()
        gevent.sleep(self.seconds)
        if self.fail is not None:
            raise self.fail
        self.batches.append(list(rows))


def rows(step: int, count: int = 1) -> list[dict]:
    return [{"step": step, "call": i} for i in range(count)]


def test_steps_ending_together_share_one_write_and_each_returns_after_it():
    inserts = Inserts(seconds=0.01)
    writer = GroupWriter(inserts)
    done = []
    greenlets = [gevent.spawn(lambda i=i: writer.write(rows(i, 2)) or done.append((i, len(inserts.batches))))
                 for i in range(5)]
    gevent.joinall(greenlets, raise_error=True)
    assert len(inserts.batches) == 1 and sorted(r["step"] for r in inserts.batches[0]) == [0, 0, 1, 1, 2, 2, 3, 3, 4, 4]
    assert sorted(done) == [(i, 1) for i in range(5)]  # none returned before the write


def test_a_lone_step_writes_its_own_rows_once_and_a_later_one_starts_anew():
    inserts = Inserts()
    writer = GroupWriter(inserts)
    writer.write(rows(1))
    writer.write(rows(2))
    assert inserts.batches == [rows(1), rows(2)]


def test_a_failed_write_fails_every_step_in_its_batch():
    writer = GroupWriter(Inserts(fail=ServiceError(503, "database-unavailable", "down")))
    greenlets = [gevent.spawn(writer.write, rows(i)) for i in range(3)]
    gevent.joinall(greenlets)
    assert all(isinstance(g.exception, ServiceError) and g.exception.status == 503 for g in greenlets)


def test_a_writer_killed_while_writing_leaves_no_step_waiting():
    inserts = Inserts(seconds=5)
    writer = GroupWriter(inserts)
    first, follower = gevent.spawn(writer.write, rows(1)), gevent.spawn(writer.write, rows(2))
    assert inserts.started.wait(timeout=2)
    assert inserts.writing == [rows(1) + rows(2)]  # the first gathered the follower's rows and is writing both
    first.kill()
    follower.join(timeout=2)
    assert follower.ready() and isinstance(follower.exception, ServiceError) and follower.exception.status == 503
    assert inserts.batches == []


@pytest.fixture
def database(database_url):
    bound = db.obj
    database = make_database(database_url, pooled=False)
    db.initialize(database)
    with database.connection_context():
        yield database
    db.initialize(bound)


def test_many_rows_go_in_statements_of_a_bounded_size(database, monkeypatch):
    organization = Organization.create(slug="acme", created_at=0)
    monkeypatch.setattr(records, "ROWS_PER_STATEMENT", 3)
    statements = []
    execute = database.execute_sql
    monkeypatch.setattr(database, "execute_sql", lambda sql, params=None: statements.append(sql) or execute(sql, params))
    written = [{"organization": organization.id, "conversation_id": "c", "turn": "t", "tool": "search",
                "tool_version": 1, "subject": "alice", "anonymous": False, "kind": None, "http_code": 200,
                "latency_ms": 3, "size_chars": 2, "jti": f"j{i}", "approval": None, "session_start": False,
                "created_at": 1.0}
               for i in range(7)]
    records.write_call_records(written)
    assert len([s for s in statements if s.startswith("INSERT INTO call_record")]) == 3
    assert sorted(r.jti for r in CallRecord.select()) == sorted(f"j{i}" for i in range(7))
