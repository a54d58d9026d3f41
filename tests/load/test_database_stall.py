"""A database that stops answering, rather than refusing: every wait on it has a deadline
(TOOLGATE_DATABASE_TIMEOUT_SECONDS, small here), so each request answers 503 `database-unavailable` within it, a
connection caught by the stall is never handed out again, and the service answers again as soon as the database
does, with every write it acknowledged kept.

PostgreSQL is reached through a proxy that freezes (tests/load/proxy.py): every byte held both ways, every socket
open, as a network that drops everything. SQLite's ways of not answering are a writer holding the lock and a
statement that runs on. Elapsed times are measured with generous margins; the deadlines themselves are small.
"""
import gc
import sqlite3
import time
from urllib.parse import urlsplit

import gevent
import pytest

from service.database import db, make_database
from service.pool import DatabaseTimeout
from tests.load.proxy import proxied_service
from tests.support.constants import POSTGRES_URL
from tests.support.databases import fresh_postgres_schema
from tests.support.definitions import tool
from tests.support.live import Conversation, live_service, mock_backend, publish_project

needs_postgres = pytest.mark.skipif(not POSTGRES_URL, reason="TOOLGATE_TEST_POSTGRES_URL is not set")

#: The database deadline of these tests' services, and what a loaded machine may add to it.
DEADLINE = 0.5
MARGIN = 1.0
#: How long a client waits during a freeze: past it, a request the stall holds fails the test instead of hanging it.
PATIENCE = DEADLINE + MARGIN + 0.5


@pytest.fixture
def frozen(tmp_path):
    """A live service whose PostgreSQL is reached through a proxy the test freezes; yields (service, proxy)."""
    yield from _proxied(tmp_path)


@pytest.fixture
def frozen_one_connection(tmp_path):
    """As `frozen`, with a pool of one connection, so the test knows which one a request used."""
    yield from _proxied(tmp_path, database_pool_size=1)


def _proxied(tmp_path, **settings):
    with proxied_service(tmp_path, database_timeout_seconds=DEADLINE, **settings) as proxied_pair:
        yield proxied_pair


def timed(call, *args, **kwargs):
    """(response, seconds it took)."""
    started = time.monotonic()
    response = call(*args, **kwargs)
    return response, time.monotonic() - started


def first_answer_after_thaw(service, thawed: float):
    """`GET /v1/tools` until it is not refused, for at most a second after `thawed`: the process may still be hearing
    the database's first answer."""
    response = service.api("GET", "/v1/tools", timeout=5)
    while response.status_code == 503 and time.monotonic() - thawed < 1.0:
        response = service.api("GET", "/v1/tools", timeout=5)
    return response


def assert_refused_in_time(response, seconds, limit=DEADLINE + MARGIN):
    assert response.status_code == 503, response.text
    assert response.json()["code"] == "database-unavailable"
    assert response.headers["Retry-After"] == "1"
    assert seconds < limit


@needs_postgres
def test_a_read_a_write_and_a_step_during_a_freeze_answer_503_within_the_deadline(frozen):
    service, proxy = frozen
    with mock_backend([service.issuer]) as backend:
        publish_project(service, [tool("search", backend + "/tools/search/echo")])
        chat = Conversation(service, service.session_token())
        turn = chat.turn()
        proxy.freeze()
        requests_ = {
            "read": gevent.spawn(timed, service.api, "GET", "/v1/tools", timeout=PATIENCE),
            "write": gevent.spawn(timed, service.api, "POST", "/v1/tools",
                                  json=tool("frozen", "https://api.example.com/x"), timeout=PATIENCE),
            "step": gevent.spawn(timed, service.as_session, "POST",
                                 f"/v1/conversations/{chat.id}/turns/{turn}/steps", chat.token, timeout=PATIENCE,
                                 json={"calls": [{"id": "1", "name": "search", "arguments": {}}]}),
        }
        gevent.joinall(list(requests_.values()), raise_error=True)
    for name, request in requests_.items():
        response, seconds = request.value
        assert_refused_in_time(response, seconds), name


@needs_postgres
def test_once_the_stall_is_known_the_next_requests_are_refused_at_once(frozen):
    service, proxy = frozen
    assert service.api("GET", "/v1/tools").status_code == 200
    proxy.freeze()
    assert_refused_in_time(*timed(service.api, "GET", "/v1/tools", timeout=PATIENCE))
    # The process now asks the database itself; requests are refused without waiting a deadline of their own. The
    # service runs in this test's process: its heap, 1,500 tests into a part of the suite, is collected first and not
    # during the twenty (a full collection held every greenlet here for 300 ms once, a pause no refusal waited).
    gc.collect()
    gc.disable()
    try:
        answers = [r.value for r in gevent.joinall([gevent.spawn(timed, service.api, "GET", "/v1/tools",
                                                                 timeout=PATIENCE) for _ in range(20)],
                                                   raise_error=True)]
    finally:
        gc.enable()
    for response, seconds in answers:
        assert_refused_in_time(response, seconds, limit=DEADLINE / 2)


@needs_postgres
def test_after_a_thaw_the_service_answers_within_a_second(frozen):
    service, proxy = frozen
    assert service.api("GET", "/v1/tools").status_code == 200
    proxy.freeze()
    assert_refused_in_time(*timed(service.api, "POST", "/v1/tools", json=tool("held", "https://api.example.com/x"),
                                  timeout=PATIENCE))
    assert_refused_in_time(*timed(service.api, "GET", "/v1/tools", timeout=PATIENCE))
    gevent.sleep(DEADLINE * 1.5)  # whatever the process was asking the database when the freeze began has timed out
    proxy.thaw()
    thawed = time.monotonic()
    read = first_answer_after_thaw(service, thawed)
    write = service.api("POST", "/v1/tools", json=tool("after", "https://api.example.com/x"), timeout=5)
    assert (read.status_code, write.status_code) == (200, 201), (read.text, write.text)
    assert time.monotonic() - thawed < 1.0
    assert "after" in {t["name"] for t in service.api("GET", "/v1/tools").json()["tools"]}


@needs_postgres
def test_writes_across_a_freeze_answer_201_or_503_and_every_201_is_kept(frozen):
    service, proxy = frozen

    def register(i):
        return timed(service.api, "POST", "/v1/tools", json=tool(f"across_{i}", "https://api.example.com/x"),
                     timeout=PATIENCE)

    # A write every 50 ms for 2 s; the network freezes for the second in the middle.
    writers = [gevent.spawn_later(i * 0.05, register, i) for i in range(40)]
    gevent.sleep(0.5)
    proxy.freeze()
    gevent.sleep(1.0)
    proxy.thaw()
    gevent.joinall(writers, timeout=30, raise_error=True)
    answers = {i: w.value for i, w in enumerate(writers)}

    statuses = {response.status_code for response, _ in answers.values()}
    assert statuses == {201, 503}, {response.status_code: response.text for response, _ in answers.values()}
    for response, seconds in answers.values():
        if response.status_code == 503:
            assert_refused_in_time(response, seconds)
    listed = {t["name"] for t in service.api("GET", "/v1/tools").json()["tools"]}
    acknowledged = {f"across_{i}" for i, (response, _) in answers.items() if response.status_code == 201}
    assert acknowledged <= listed


@needs_postgres
def test_a_connection_caught_by_a_freeze_is_closed_and_never_handed_out_again(frozen_one_connection):
    service, proxy = frozen_one_connection
    assert service.api("GET", "/v1/tools").status_code == 200
    [caught] = [conn for _, _, conn in db.obj._connections]  # the pool's one idle connection, used next
    proxy.freeze()
    assert_refused_in_time(*timed(service.api, "GET", "/v1/tools", timeout=PATIENCE))
    assert caught.closed
    assert caught not in [conn for _, _, conn in db.obj._connections]
    proxy.thaw()
    assert first_answer_after_thaw(service, time.monotonic()).status_code == 200
    assert [conn for _, _, conn in db.obj._connections] != [caught]


@needs_postgres
def test_postgres_ends_a_slow_statement_itself_before_the_deadline_and_the_connection_stays_usable():
    with fresh_postgres_schema(POSTGRES_URL) as url:
        database = make_database(url, timeout_seconds=DEADLINE)
        with database.connection_context():
            started = time.monotonic()
            with pytest.raises(Exception) as refused:
                database.execute_sql("SELECT pg_sleep(5)")
            assert time.monotonic() - started < DEADLINE
            assert "statement timeout" in str(refused.value)  # the server's refusal, not the client's deadline
            assert not isinstance(refused.value, DatabaseTimeout)
            assert database.execute_sql("SELECT 1").fetchone() == (1,)
        database.close_all()


# ---- SQLite --------------------------------------------------------------------------------------------------

def test_a_sqlite_write_behind_another_writer_answers_503_within_the_deadline(tmp_path):
    with live_service(tmp_path, database_timeout_seconds=DEADLINE) as service:
        other = sqlite3.connect(urlsplit(service.config.database_url).path, isolation_level=None)
        other.execute("BEGIN IMMEDIATE")  # another process (a second worker, the CLI) holding the write lock
        try:
            assert_refused_in_time(*timed(service.api, "POST", "/v1/tools",
                                          json=tool("locked_out", "https://api.example.com/x")))
        finally:
            other.execute("ROLLBACK")
            other.close()
        assert service.api("POST", "/v1/tools", json=tool("let_in", "https://api.example.com/x")).status_code == 201


def test_a_sqlite_statement_still_running_at_the_deadline_is_interrupted(tmp_path):
    database = make_database(f"sqlite:///{tmp_path / 'long.db'}", timeout_seconds=DEADLINE)
    # Seconds of work (3 s for 20 million here), so that without a deadline it ends, answered, and the test fails.
    long = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 50000000) SELECT count(*) FROM n"
    with database.connection_context():
        started = time.monotonic()
        with pytest.raises(DatabaseTimeout):
            database.execute_sql(long)
        assert time.monotonic() - started < DEADLINE + MARGIN
        assert database.execute_sql("SELECT 1").fetchone() == (1,)  # the same connection, still usable
    database.close_all()
