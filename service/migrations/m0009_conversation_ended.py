"""When an MCP client ended the conversation that is its session (`DELETE /mcp/projects/<project>`).

A project server's session ids are signed, so any instance accepts one; ending a session must reach every instance as
well, so it is kept on the conversation the session is. Null: not ended.
"""

UP = "ALTER TABLE conversation ADD COLUMN ended_at DOUBLE PRECISION"


def up(db):
    db.execute_sql(UP)


def down(db):
    db.execute_sql("ALTER TABLE conversation DROP COLUMN ended_at")
