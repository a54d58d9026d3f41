"""The messages of conversations whose turns the platform runs itself, and the one-turn-at-a-time lock."""
from service.migrations import execute_script

UP = """
CREATE TABLE message (
    id {pk},
    conversation_id VARCHAR(64) NOT NULL REFERENCES conversation (id) ON DELETE CASCADE,
    turn VARCHAR(64) NOT NULL, role VARCHAR(16) NOT NULL,
    content TEXT NOT NULL, created_at DOUBLE PRECISION NOT NULL);
CREATE INDEX message_conversation ON message (conversation_id, id);
CREATE TABLE turn_lock (
    conversation_id VARCHAR(64) PRIMARY KEY REFERENCES conversation (id) ON DELETE CASCADE,
    holder VARCHAR(64) NOT NULL, expires_at DOUBLE PRECISION NOT NULL)
"""


def up(db):
    execute_script(db, UP)


def down(db):
    for table in ("turn_lock", "message"):
        db.execute_sql(f"DROP TABLE IF EXISTS {table}")
