"""The call log on PostgreSQL, partitioned by day: partitions made ahead by the service, a record with no partition
for its day kept in the default one, retention dropping whole days while today's writes go on, and migration 0007
moving an existing log (and `down` moving it back). Times are given, never waited for; SQLite has none of this."""
import gevent
import pytest

from service.conversations.records import insert_call_records
from service.database import db, make_database
from service.limits import CALL_LOG_DAYS_AHEAD, SECONDS_PER_DAY
from service.migrations import _ensure_ledger, all_migrations, call_partitions, migrate
from service.migrations import m0007_call_log_scale as m0007
from service.models import CallRecord
from service.records.calls import CallQuery, find_calls, purge
from service.records.upkeep import keep_partitions_ahead, upkeep
from service.registry import get_organization
from tests.support.constants import POSTGRES_URL
from tests.support.databases import fresh_postgres_schema

needs_postgres = pytest.mark.skipif(not POSTGRES_URL, reason="TOOLGATE_TEST_POSTGRES_URL is not set")
#: Midnight UTC of a day far from today, so nothing the migration made ahead is in the way.
FUTURE = 30_000 * SECONDS_PER_DAY


def record(org_id, at, **fields):
    values = {"organization": org_id, "conversation_id": "c", "turn": "t", "tool": "get_orders", "tool_version": 1,
              "subject": "alice", "anonymous": False, "kind": None, "http_code": 200, "latency_ms": 1.0,
              "size_chars": 2, "jti": "j", "approval": None, "session_start": False, "created_at": at}
    values.update(fields)
    return values


def in_default():
    return db.obj.execute_sql(f"SELECT id FROM {call_partitions.DEFAULT} ORDER BY id").fetchall()


def test_sqlite_keeps_one_table_and_nothing_to_make_ahead(app, database_url):
    if not database_url.startswith("sqlite"):
        pytest.skip("SQLite only")
    with db.connection_context():
        assert not call_partitions.partitioned(db.obj)
    assert upkeep(db.obj, FUTURE) == [] and keep_partitions_ahead(db.obj) is None


@needs_postgres
@pytest.mark.parametrize("database_url", ["postgres"], indirect=True)
def test_the_service_makes_partitions_ahead_at_start_and_on_schedule(app, database_url):
    days = range(30_000, 30_000 + CALL_LOG_DAYS_AHEAD + 1)
    times = [FUTURE + 60, FUTURE + SECONDS_PER_DAY + 60]  # its start, then a day later

    def clock():
        return times.pop(0) if len(times) > 1 else times[0]

    loop = keep_partitions_ahead(db.obj, clock=clock, every=0)
    try:
        with db.connection_context():
            made = call_partitions.day_partitions(db.obj)
        assert set(days) <= set(made) and days[-1] + 1 not in made  # made at start
        for _ in range(500):  # the schedule's next upkeep, a day later: one more day ahead
            with db.connection_context():
                made = call_partitions.day_partitions(db.obj)
            if days[-1] + 1 in made:
                break
            gevent.sleep(0.01)
        assert days[-1] + 1 in made and made[days[0]] == call_partitions.partition_name(30_000)
    finally:
        loop.kill()
    assert upkeep(db.obj, FUTURE) == []  # made once: another process (or hour) finds them made


@needs_postgres
@pytest.mark.parametrize("database_url", ["postgres"], indirect=True)
def test_a_record_of_a_day_with_no_partition_lands_in_the_default_and_moves_with_its_day(app, keys):
    with db.connection_context():
        org = get_organization("acme")
        insert_call_records([record(org.id, FUTURE + 5, jti="stray")])
        (stray,) = in_default()
        assert call_partitions.create_day(db.obj, 30_000)
        assert in_default() == []
        moved = db.obj.execute_sql(f"SELECT id FROM {call_partitions.partition_name(30_000)}").fetchall()
        assert moved == [stray]
        assert [r.jti for r in find_calls(org, CallQuery())] == ["stray"]


@needs_postgres
@pytest.mark.parametrize("database_url", ["postgres"], indirect=True)
def test_retention_drops_whole_days_while_a_write_to_today_goes_on(app, keys, database_url):
    now = FUTURE + SECONDS_PER_DAY / 2
    with db.connection_context():
        org = get_organization("acme").id
        for day in (29_950, 29_951, 29_979, 29_980, 30_000):
            call_partitions.create_day(db.obj, day)
        rows = [record(org, day * SECONDS_PER_DAY + 10, tool=f"d{day}") for day in (29_950, 29_951) for _ in range(3)]
        rows += [record(org, 29_979 * SECONDS_PER_DAY + h * 3600, tool="edge") for h in range(24)]
        rows += [record(org, 29_960 * SECONDS_PER_DAY, tool="stray")]  # no partition of its own: the default's
        insert_call_records(rows)
    # A write to today's partition, its transaction open, on a connection of its own.
    writer = make_database(database_url, pooled=False)
    writer.connect()
    writer.execute_sql("BEGIN")
    writer.execute_sql("INSERT INTO call_record (organization_id, conversation_id, turn, tool, subject, anonymous, "
                       "latency_ms, session_start, created_at) VALUES (%s, 'c', 't', 'today', 's', false, 1, false, %s)",
                       (org, now))
    with db.connection_context():
        purging = gevent.spawn(purge, 21, now=now, batch=5)
        watcher = make_database(database_url, pooled=False)
        with watcher.connection_context():  # the purge waits for the table's lock, held by the write: let it go
            for _ in range(500):
                waiting = watcher.execute_sql("SELECT count(*) FROM pg_locks WHERE NOT granted "
                                              "AND relation = 'call_record'::regclass").fetchone()[0]
                if waiting or purging.dead:
                    break
                gevent.sleep(0.01)
        writer.execute_sql("COMMIT")
        writer.close()
        removed = purging.get(timeout=30)
        made = call_partitions.day_partitions(db.obj)
        assert 29_950 not in made and 29_951 not in made and {29_979, 29_980, 30_000} <= set(made)
        kept = {tool: CallRecord.select().where(CallRecord.tool == tool).count() for tool in ("edge", "today")}
        # The cutoff falls on day 29,979 at noon: its morning went in batches, its afternoon stays.
        assert kept == {"edge": 12, "today": 1}
        assert removed == 6 + 12 + 1
        assert CallRecord.select().where(CallRecord.tool == "stray").count() == 0


def _migrated_to(database, last):
    _ensure_ledger(database)
    for migration in all_migrations():
        if migration.number <= last:
            with database.atomic():
                migration.module.up(database)
                database.execute_sql("INSERT INTO schema_migration (number, name, applied_at) VALUES (%s, %s, 0)"
                                     if call_partitions.is_postgres(database) else
                                     "INSERT INTO schema_migration (number, name, applied_at) VALUES (?, ?, 0)",
                                     (migration.number, migration.name))


@pytest.mark.parametrize("engine", ["sqlite", pytest.param("postgres", marks=needs_postgres)])
def test_migration_0007_moves_an_existing_log_keeping_every_id(engine, tmp_path):
    if engine == "sqlite":
        _migration_round_trip(f"sqlite:///{tmp_path / 'old.db'}")
        return
    with fresh_postgres_schema(POSTGRES_URL, migrated=False) as url:
        _migration_round_trip(url)


def _migration_round_trip(url):
    database = make_database(url, pooled=False)
    with database.connection_context():
        _migrated_to(database, 6)
        database.execute_sql("INSERT INTO organization (slug, algorithm, created_at) VALUES ('acme', 'ES256', 0)")
        old = [record(1, at, tool="old") for at in (10.0, SECONDS_PER_DAY * 19_000 + 5, SECONDS_PER_DAY * 19_000 + 7,
                                                    SECONDS_PER_DAY * 19_100)]
        CallRecord.bind(database)
        try:
            CallRecord.insert_many(old).execute()
            CallRecord.delete().where(CallRecord.created_at == 10.0).execute()  # a gap in the ids, kept as it is
            before = database.execute_sql("SELECT id, created_at, tool FROM call_record ORDER BY id").fetchall()
            migrate(database)
            after = database.execute_sql("SELECT id, created_at, tool FROM call_record ORDER BY id").fetchall()
            assert after == before and len(after) == 3
            CallRecord.insert_many([record(1, SECONDS_PER_DAY * 19_100 + 1, tool="new")]).execute()
            assert CallRecord.get(CallRecord.tool == "new").id > max(row[0] for row in before)  # the sequence goes on
            if call_partitions.is_postgres(database):
                made = call_partitions.day_partitions(database)
                assert {19_000, 19_100} <= set(made)
                assert database.execute_sql(f"SELECT count(*) FROM {call_partitions.DEFAULT}").fetchone()[0] == 0
            with database.atomic():
                m0007.down(database)
            assert not call_partitions.partitioned(database)
            back = database.execute_sql("SELECT id, created_at, tool FROM call_record ORDER BY id").fetchall()
            assert back[:3] == before and len(back) == 4
            indexes = {row.name for row in database.get_indexes("call_record")}
            assert set(m0007.OLD_INDEX_NAMES) <= indexes and not indexes & set(m0007.INDEX_NAMES[:-1])
        finally:
            CallRecord.bind(db)


@needs_postgres
@pytest.mark.parametrize("database_url", ["postgres"], indirect=True)
def test_an_upkeep_the_database_refuses_is_logged_and_tried_again(app, monkeypatch, caplog):
    from peewee import OperationalError

    def refused(database, now):
        raise OperationalError("canceling statement due to lock timeout")

    monkeypatch.setattr(call_partitions, "ensure_ahead", refused)
    assert upkeep(db.obj, FUTURE) == []
    assert "not made ahead this time" in caplog.text and "lock timeout" in caplog.text
    monkeypatch.undo()
    assert upkeep(db.obj, FUTURE)  # the next upkeep makes them
