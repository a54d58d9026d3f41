"""The call log's rollups (issue 36): `call_rollup` and `call_latency_rollup` (service.migrations.call_rollups says
what they hold), filled from
the call log as it stands, a day of it per statement, so the summary and the Calls screen's charts show old calls
too. From here on each step's records and their rollups are written in one transaction."""
from service.migrations import call_rollups


def up(db):
    for statement in call_rollups.CREATE:
        db.execute_sql(statement)
    call_rollups.backfill(db)


def down(db):
    for statement in call_rollups.DROP:
        db.execute_sql(statement)
