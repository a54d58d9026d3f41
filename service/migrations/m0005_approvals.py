"""Calls of tools that require approval, held until the person in the conversation approves or declines them.

The row keeps exactly what will be sent (the tool's definition as the conversation resolved it, and the arguments),
never a response body or a token. The call log notes which approval a call was sent, or declined, on.
"""
from service.migrations import execute_script

UP = """
CREATE TABLE approval (
    id VARCHAR(64) PRIMARY KEY,
    organization_id INTEGER NOT NULL REFERENCES organization (id) ON DELETE CASCADE,
    conversation_id VARCHAR(64) NOT NULL REFERENCES conversation (id) ON DELETE CASCADE,
    turn VARCHAR(64) NOT NULL, call_id TEXT NOT NULL,
    tool VARCHAR(64) NOT NULL, tool_version INTEGER, definition TEXT NOT NULL,
    arguments TEXT NOT NULL, subject VARCHAR(256) NOT NULL,
    status VARCHAR(16) NOT NULL, created_at DOUBLE PRECISION NOT NULL, expires_at DOUBLE PRECISION NOT NULL,
    decided_at DOUBLE PRECISION);
CREATE INDEX approval_conversation ON approval (conversation_id, created_at);
ALTER TABLE call_record ADD COLUMN approval VARCHAR(64)
"""


def up(db):
    execute_script(db, UP)


def down(db):
    db.execute_sql("ALTER TABLE call_record DROP COLUMN approval")
    db.execute_sql("DROP TABLE IF EXISTS approval")
