"""Liveness and readiness: alive is answering at all; ready is a reachable database whose schema is current."""
from __future__ import annotations

import logging
from dataclasses import dataclass, field

from peewee import DatabaseError

from service.database import UNAVAILABLE, db
from service.migrations import pending

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Readiness:
    """Whether this instance should receive traffic, and what is wrong when it should not."""

    database: bool
    schema: bool
    problems: list[str] = field(default_factory=list)

    @property
    def ready(self) -> bool:
        return self.database and self.schema

    def to_dict(self) -> dict[str, object]:
        return {"status": "ready" if self.ready else "not-ready",
                "database": "reachable" if self.database else "unreachable",
                "schema": "current" if self.schema else ("behind" if self.database else "unknown"),
                "problems": self.problems}


def readiness(database=None) -> Readiness:
    """Ask the database for one row, then which migrations are pending. Never raises for a database fault."""
    database = database or db.obj
    opened_here = database.is_closed()
    try:
        if opened_here:
            database.connect()
        database.execute_sql("SELECT 1").fetchall()
        missing = pending(database)
    except (DatabaseError, *UNAVAILABLE) as error:
        # The probe is public: it says what kind of fault, and the log says the rest (a host, a file).
        log.warning("readiness: the database is unreachable: %s", error)
        return Readiness(database=False, schema=False, problems=[f"database: {type(error).__name__}"])
    finally:
        if opened_here and not database.is_closed():
            database.close()
    if missing:
        names = ", ".join(f"{m.number:04d}_{m.name}" for m in missing)
        return Readiness(database=True, schema=False, problems=[f"schema behind: pending {names}"])
    return Readiness(database=True, schema=True)
