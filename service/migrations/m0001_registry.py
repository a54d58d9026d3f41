"""Organizations, API keys, signing keys, tools with drafts and published versions, projects and pins."""
from service.migrations import execute_script

UP = """
CREATE TABLE organization (
    id {pk}, slug VARCHAR(64) NOT NULL UNIQUE, algorithm VARCHAR(16) NOT NULL,
    created_at DOUBLE PRECISION NOT NULL);
CREATE TABLE api_key (
    id {pk}, organization_id INTEGER NOT NULL REFERENCES organization (id) ON DELETE CASCADE,
    key_id VARCHAR(64) NOT NULL UNIQUE, secret_hash VARCHAR(128) NOT NULL, role VARCHAR(16) NOT NULL,
    label VARCHAR(200) NOT NULL, created_at DOUBLE PRECISION NOT NULL, revoked_at DOUBLE PRECISION,
    CHECK (role IN ('admin', 'agent', 'backend')));
CREATE TABLE signing_key (
    id {pk}, organization_id INTEGER NOT NULL REFERENCES organization (id) ON DELETE CASCADE,
    kid VARCHAR(128) NOT NULL UNIQUE, alg VARCHAR(16) NOT NULL, sealed_private_key TEXT NOT NULL,
    created_at DOUBLE PRECISION NOT NULL, retired_at DOUBLE PRECISION,
    standby BOOLEAN NOT NULL DEFAULT FALSE);
CREATE TABLE project (
    id {pk}, organization_id INTEGER NOT NULL REFERENCES organization (id) ON DELETE CASCADE,
    name VARCHAR(64) NOT NULL, created_at DOUBLE PRECISION NOT NULL);
CREATE UNIQUE INDEX project_organization_name ON project (organization_id, name);
CREATE TABLE tool (
    id {pk}, organization_id INTEGER NOT NULL REFERENCES organization (id) ON DELETE CASCADE,
    name VARCHAR(64) NOT NULL, display_name VARCHAR(200) NOT NULL,
    project_id INTEGER REFERENCES project (id) ON DELETE RESTRICT, created_at DOUBLE PRECISION NOT NULL);
CREATE UNIQUE INDEX tool_organization_name ON tool (organization_id, name);
CREATE TABLE tool_draft (
    id {pk}, tool_id INTEGER NOT NULL UNIQUE REFERENCES tool (id) ON DELETE CASCADE,
    definition TEXT NOT NULL, revision INTEGER NOT NULL, based_on INTEGER,
    updated_at DOUBLE PRECISION NOT NULL, updated_by VARCHAR(200) NOT NULL);
CREATE TABLE tool_version (
    id {pk}, tool_id INTEGER NOT NULL REFERENCES tool (id) ON DELETE CASCADE,
    number INTEGER NOT NULL, definition TEXT NOT NULL, published_at DOUBLE PRECISION NOT NULL,
    published_by VARCHAR(200) NOT NULL);
CREATE UNIQUE INDEX tool_version_tool_number ON tool_version (tool_id, number);
CREATE TABLE project_draft (
    id {pk}, project_id INTEGER NOT NULL UNIQUE REFERENCES project (id) ON DELETE CASCADE,
    pins TEXT NOT NULL, revision INTEGER NOT NULL, updated_at DOUBLE PRECISION NOT NULL,
    updated_by VARCHAR(200) NOT NULL);
CREATE TABLE project_version (
    id {pk}, project_id INTEGER NOT NULL REFERENCES project (id) ON DELETE CASCADE,
    number INTEGER NOT NULL, published_at DOUBLE PRECISION NOT NULL, published_by VARCHAR(200) NOT NULL);
CREATE UNIQUE INDEX project_version_project_number ON project_version (project_id, number);
CREATE TABLE pin (
    id {pk}, project_version_id INTEGER NOT NULL REFERENCES project_version (id) ON DELETE CASCADE,
    tool_version_id INTEGER NOT NULL REFERENCES tool_version (id) ON DELETE RESTRICT,
    tool_id INTEGER NOT NULL REFERENCES tool (id) ON DELETE RESTRICT);
CREATE UNIQUE INDEX pin_project_version_tool ON pin (project_version_id, tool_id)
"""

# Published rows never change: the database itself refuses an UPDATE, whatever code path tries one.
IMMUTABLE_TABLES = ("tool_version", "project_version", "pin")

SQLITE_TRIGGER = """
CREATE TRIGGER {table}_immutable BEFORE UPDATE ON {table}
BEGIN SELECT RAISE(ABORT, 'published versions are immutable'); END
"""

POSTGRES_FUNCTION = """
CREATE OR REPLACE FUNCTION toolgate_refuse_update() RETURNS trigger AS $$
BEGIN RAISE EXCEPTION 'published versions are immutable'; END $$ LANGUAGE plpgsql
"""

POSTGRES_TRIGGER = ("CREATE TRIGGER {table}_immutable BEFORE UPDATE ON {table} FOR EACH ROW "
                    "EXECUTE FUNCTION toolgate_refuse_update()")


def up(db):
    execute_script(db, UP)
    from peewee import PostgresqlDatabase

    if isinstance(db, PostgresqlDatabase):
        db.execute_sql(POSTGRES_FUNCTION)
        for table in IMMUTABLE_TABLES:
            db.execute_sql(POSTGRES_TRIGGER.format(table=table))
    else:
        for table in IMMUTABLE_TABLES:
            db.execute_sql(SQLITE_TRIGGER.format(table=table))


def down(db):
    for table in ("pin", "project_version", "project_draft", "tool_version", "tool_draft", "tool", "project",
                  "signing_key", "api_key", "organization"):
        db.execute_sql(f"DROP TABLE IF EXISTS {table}")
