"""Conversations, their turns, and the record of every call (never a body, never a token)."""
from service.migrations import execute_script

UP = """
CREATE TABLE conversation (
    id VARCHAR(64) PRIMARY KEY,
    organization_id INTEGER NOT NULL REFERENCES organization (id) ON DELETE CASCADE,
    project_id INTEGER NOT NULL REFERENCES project (id) ON DELETE CASCADE,
    project_version_id INTEGER REFERENCES project_version (id) ON DELETE CASCADE,
    subject VARCHAR(256) NOT NULL, anonymous BOOLEAN NOT NULL,
    context TEXT NOT NULL, created_at DOUBLE PRECISION NOT NULL);
CREATE INDEX conversation_organization_subject ON conversation (organization_id, subject);
CREATE TABLE turn (
    id VARCHAR(64) PRIMARY KEY,
    conversation_id VARCHAR(64) NOT NULL REFERENCES conversation (id) ON DELETE CASCADE,
    created_at DOUBLE PRECISION NOT NULL);
CREATE INDEX turn_conversation ON turn (conversation_id);
CREATE TABLE call_record (
    id {pk},
    organization_id INTEGER NOT NULL REFERENCES organization (id) ON DELETE CASCADE,
    conversation_id VARCHAR(64) NOT NULL, turn VARCHAR(64) NOT NULL,
    tool VARCHAR(64) NOT NULL, tool_version INTEGER, subject VARCHAR(256) NOT NULL, anonymous BOOLEAN NOT NULL,
    kind VARCHAR(32), http_code INTEGER, latency_ms DOUBLE PRECISION NOT NULL, size_chars INTEGER,
    jti VARCHAR(64), session_start BOOLEAN NOT NULL, created_at DOUBLE PRECISION NOT NULL);
CREATE INDEX call_record_organization_created ON call_record (organization_id, created_at);
CREATE INDEX call_record_conversation ON call_record (conversation_id)
"""


def up(db):
    execute_script(db, UP)


def down(db):
    for table in ("call_record", "turn", "conversation"):
        db.execute_sql(f"DROP TABLE IF EXISTS {table}")
