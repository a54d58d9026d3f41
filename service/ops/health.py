"""Liveness and readiness: alive is answering at all; ready is a reachable database whose schema is current, and a
process that can admit work (its work gate and its connections not saturated)."""
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
    #: Whether the process can take more work: False while its work gate or its connections stay saturated.
    admitting: bool = True

    @property
    def ready(self) -> bool:
        return self.database and self.schema and self.admitting

    def to_dict(self) -> dict[str, object]:
        return {"status": "ready" if self.ready else "not-ready",
                "database": "reachable" if self.database else "unreachable",
                "schema": "current" if self.schema else ("behind" if self.database else "unknown"),
                "work": "admitting" if self.admitting else "saturated",
                "problems": self.problems}


#: What readiness says of a process that cannot admit work.
SATURATED = "work: saturated (every place at the work gate taken past its grace, or every connection at work)"


def readiness(database=None, *, admitting: bool = True) -> Readiness:
    """Whether this process should get traffic: `admitting` (the caller knows its gate and server), then the database
    asked for one row, then which migrations are pending. Never raises for a database fault."""
    state = _database_readiness(database)
    if admitting:
        return state
    return Readiness(state.database, state.schema, [SATURATED, *state.problems], admitting=False)


def _database_readiness(database=None) -> Readiness:
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
