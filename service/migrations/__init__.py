"""Numbered schema migrations and the check that refuses to serve a database that is behind.

Each migration is a module `mNNNN_name.py` with `up(db)` and `down(db)`, applied in order inside a transaction and
recorded in `schema_migration`. DDL is written once with two dialect words, `{pk}` and `{now}`, filled per engine.
"""
from __future__ import annotations

import importlib
import pkgutil
import time
from dataclasses import dataclass
from types import ModuleType

from peewee import PostgresqlDatabase

from service.database import db


class SchemaBehind(RuntimeError):
    """The database has not been migrated to the code's schema."""


@dataclass(frozen=True)
class Migration:
    number: int
    name: str
    #: Its module, whose `up(database)` applies it.
    module: ModuleType


def all_migrations() -> list[Migration]:
    """Every migration shipped with the code, in order."""
    found = []
    for info in pkgutil.iter_modules(__path__):
        if info.name.startswith("m") and info.name[1:5].isdigit():
            module = importlib.import_module(f"{__name__}.{info.name}")
            found.append(Migration(int(info.name[1:5]), info.name[6:], module))
    return sorted(found, key=lambda m: m.number)


def execute_script(database, script: str) -> None:
    """Run `;`-separated DDL after filling the dialect words for this engine."""
    postgres = isinstance(database, PostgresqlDatabase)
    words = {"pk": "BIGSERIAL PRIMARY KEY" if postgres else "INTEGER PRIMARY KEY AUTOINCREMENT"}
    for statement in script.format(**words).split(";\n"):
        if statement.strip():
            database.execute_sql(statement)


def _ensure_ledger(database) -> None:
    database.execute_sql(
        "CREATE TABLE IF NOT EXISTS schema_migration (number INTEGER PRIMARY KEY, name TEXT NOT NULL, "
        "applied_at DOUBLE PRECISION NOT NULL)"
    )


def applied_numbers(database=None) -> set[int]:
    database = database or db.obj
    if "schema_migration" not in database.get_tables():
        return set()
    return {row[0] for row in database.execute_sql("SELECT number FROM schema_migration").fetchall()}


def pending(database=None) -> list[Migration]:
    done = applied_numbers(database)
    return [m for m in all_migrations() if m.number not in done]


def migrate(database=None) -> list[Migration]:
    """Apply every pending migration, each in its own transaction; return those applied."""
    database = database or db.obj
    _ensure_ledger(database)
    applied = []
    for migration in pending(database):
        with database.atomic():
            migration.module.up(database)
            database.execute_sql(
                "INSERT INTO schema_migration (number, name, applied_at) VALUES (%s, %s, %s)"
                if isinstance(database, PostgresqlDatabase)
                else "INSERT INTO schema_migration (number, name, applied_at) VALUES (?, ?, ?)",
                (migration.number, migration.name, time.time()),
            )
        applied.append(migration)
    return applied


def check_current(database=None) -> None:
    """Raise SchemaBehind, saying how to migrate, when any migration is pending."""
    missing = pending(database)
    if missing:
        names = ", ".join(f"{m.number:04d}_{m.name}" for m in missing)
        raise SchemaBehind(
            f"The database schema is behind the code (pending: {names}). "
            "Run `toolgate migrate --database URL` first, then start the service again."
        )
