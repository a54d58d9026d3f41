"""TOOLGATE_DATABASE_TIMEOUT_SECONDS: five seconds unless told, a number of seconds above 0 and at most a minute, and
what it sets on each engine (the waits themselves are held in tests/load/test_database_stall.py)."""
import re
from urllib.parse import unquote

import pytest

from service.cli import main
from service.config import DATABASE_TIMEOUT_VARIABLE, Config
from service.database import make_database
from service.limits import DATABASE_TIMEOUT_SECONDS, MAX_DATABASE_TIMEOUT_SECONDS
from tests.support.constants import POSTGRES_URL
from tests.support.databases import fresh_postgres_schema

REFUSAL = f"{DATABASE_TIMEOUT_VARIABLE} must be a number of seconds above 0 and at most 60"


def schema_of(url: str) -> str:
    return re.search(r"-csearch_path=(\S+)", unquote(url)).group(1)


def test_unset_it_is_five_seconds():
    assert Config.from_env({}).database_timeout_seconds == DATABASE_TIMEOUT_SECONDS == 5


@pytest.mark.parametrize("text, seconds", [("1", 1.0), ("0.25", 0.25), ("60", 60.0), (" ", 5.0)])
def test_it_takes_seconds_up_to_a_minute(text, seconds):
    assert Config.from_env({DATABASE_TIMEOUT_VARIABLE: text}).database_timeout_seconds == seconds


@pytest.mark.parametrize("text", ["0", "-1", "60.5", "nan", "inf", "soon"])
def test_nonsense_and_out_of_range_are_refused_naming_the_variable(text):
    with pytest.raises(ValueError) as refused:
        Config.from_env({DATABASE_TIMEOUT_VARIABLE: text})
    assert str(refused.value) == f"{REFUSAL}; got {text!r}."
    assert MAX_DATABASE_TIMEOUT_SECONDS == 60


def test_a_command_names_the_variable_rather_than_failing_with_a_traceback(monkeypatch, capsys, tmp_path):
    monkeypatch.setenv(DATABASE_TIMEOUT_VARIABLE, "0")
    assert main(["migrate", "--database", f"sqlite:///{tmp_path / 'untouched.db'}"]) == 2  # a command that cannot run
    assert capsys.readouterr().err == f"Error: {REFUSAL}; got '0'.\n"
    assert not (tmp_path / "untouched.db").exists()


def test_the_pool_waits_for_a_free_connection_no_longer_than_the_deadline(tmp_path):
    database = make_database(f"sqlite:///{tmp_path / 'x.db'}", pool_wait_seconds=2.0, timeout_seconds=0.5)
    assert database._wait_seconds == 0.5
    assert make_database(f"sqlite:///{tmp_path / 'y.db'}", pool_wait_seconds=2.0)._wait_seconds == 2.0


def test_sqlite_waits_for_another_writer_as_long_as_the_deadline(tmp_path):
    database = make_database(f"sqlite:///{tmp_path / 'x.db'}", timeout_seconds=0.75)
    with database.connection_context():
        assert database.execute_sql("PRAGMA busy_timeout").fetchone() == (750,)


@pytest.mark.skipif(not POSTGRES_URL, reason="TOOLGATE_TEST_POSTGRES_URL is not set")
def test_postgres_times_statements_locks_and_idle_transactions_out_itself_a_little_before_the_deadline():
    with fresh_postgres_schema(POSTGRES_URL) as url:  # the URL carries options of its own (a search_path)
        database = make_database(url, timeout_seconds=2.0)
        with database.connection_context():
            settings = {name: database.execute_sql(f"SHOW {name}").fetchone()[0] for name in (
                "statement_timeout", "lock_timeout", "idle_in_transaction_session_timeout", "search_path")}
        database.close_all()
    assert settings == {"statement_timeout": "1600ms", "lock_timeout": "1600ms",
                        "idle_in_transaction_session_timeout": "1600ms", "search_path": schema_of(url)}


@pytest.mark.skipif(not POSTGRES_URL, reason="TOOLGATE_TEST_POSTGRES_URL is not set")
def test_the_command_lines_maintenance_work_runs_without_the_deadline():
    with fresh_postgres_schema(POSTGRES_URL) as url:
        database = make_database(url, pooled=False, timeout_seconds=2.0)
        with database.connection_context():
            assert database.execute_sql("SHOW statement_timeout").fetchone() == ("0",)
