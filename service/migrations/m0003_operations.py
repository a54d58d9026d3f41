"""Operations: the audit trail (a hash chain per organization) and indexes for querying the call log."""
from peewee import PostgresqlDatabase

from service.migrations import execute_script

UP = """
CREATE TABLE audit_record (
    id {pk},
    organization_id INTEGER NOT NULL REFERENCES organization (id) ON DELETE CASCADE,
    seq INTEGER NOT NULL, created_at DOUBLE PRECISION NOT NULL,
    actor VARCHAR(200) NOT NULL, action VARCHAR(32) NOT NULL,
    object_type VARCHAR(16) NOT NULL, object_name VARCHAR(128) NOT NULL, object_version INTEGER,
    before_hash VARCHAR(64), after_hash VARCHAR(64),
    prev_hash VARCHAR(64) NOT NULL, hash VARCHAR(64) NOT NULL);
CREATE UNIQUE INDEX audit_record_organization_seq ON audit_record (organization_id, seq);
CREATE INDEX audit_record_object ON audit_record (organization_id, object_type, object_name);
CREATE TABLE audit_head (
    organization_id INTEGER PRIMARY KEY REFERENCES organization (id) ON DELETE CASCADE,
    seq INTEGER NOT NULL, hash VARCHAR(64) NOT NULL);
CREATE INDEX call_record_organization_turn ON call_record (organization_id, turn);
CREATE INDEX call_record_organization_tool ON call_record (organization_id, tool, created_at);
CREATE INDEX call_record_organization_subject ON call_record (organization_id, subject, created_at);
CREATE INDEX call_record_created ON call_record (created_at)
"""

# An audit record never changes once written; the chain is what detects a change made by someone who can drop this.
SQLITE_TRIGGER = """
CREATE TRIGGER audit_record_immutable BEFORE UPDATE ON audit_record
BEGIN SELECT RAISE(ABORT, 'audit records never change'); END
"""

POSTGRES_FUNCTION = """
CREATE OR REPLACE FUNCTION toolgate_refuse_audit_update() RETURNS trigger AS $$
BEGIN RAISE EXCEPTION 'audit records never change'; END $$ LANGUAGE plpgsql
"""

POSTGRES_TRIGGER = ("CREATE TRIGGER audit_record_immutable BEFORE UPDATE ON audit_record "
                    "FOR EACH ROW EXECUTE FUNCTION toolgate_refuse_audit_update()")

INDEXES = ("call_record_organization_turn", "call_record_organization_tool", "call_record_organization_subject",
           "call_record_created")


def up(db):
    execute_script(db, UP)
    if isinstance(db, PostgresqlDatabase):
        db.execute_sql(POSTGRES_FUNCTION)
        db.execute_sql(POSTGRES_TRIGGER)
    else:
        db.execute_sql(SQLITE_TRIGGER)


def down(db):
    for index in INDEXES:
        db.execute_sql(f"DROP INDEX IF EXISTS {index}")
    for table in ("audit_head", "audit_record"):
        db.execute_sql(f"DROP TABLE IF EXISTS {table}")
    if isinstance(db, PostgresqlDatabase):
        db.execute_sql("DROP FUNCTION IF EXISTS toolgate_refuse_audit_update()")
