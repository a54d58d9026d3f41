"""Indexes that let every list be read a page at a time, in the order it is shown, without sorting the whole list.

- A project's own tools in name order: `(project_id, name)`, so `GET /v1/tools?project=P` walks one project's tools.
- An object's audit records newest first: `(organization_id, object_type, object_name, seq)` takes the place of
  `(organization_id, object_type, object_name)` (it serves every read the narrower one did, and a tool's history
  page stops at its LIMIT instead of sorting every record of the tool).
- An action's audit records newest first: `(organization_id, action, seq)`.
- The Tools screen's order, the name without case then as written: `(organization_id, lower(name), name)`, so its
  first page walks an index to its LIMIT instead of sorting every tool.

The tools list itself already walks `tool_organization_name`, the projects list `project_organization_name` and the
audit trail `audit_record_organization_seq` (migrations 0001 and 0003).
"""

UP = (
    "CREATE INDEX tool_project_name ON tool (project_id, name)",
    "CREATE INDEX audit_record_object_seq ON audit_record (organization_id, object_type, object_name, seq)",
    "DROP INDEX audit_record_object",
    "CREATE INDEX audit_record_action_seq ON audit_record (organization_id, action, seq)",
    "CREATE INDEX tool_organization_folded_name ON tool (organization_id, lower(name), name)",
)


def up(db):
    for statement in UP:
        db.execute_sql(statement)


def down(db):
    db.execute_sql("CREATE INDEX audit_record_object ON audit_record (organization_id, object_type, object_name)")
    for index in ("tool_organization_folded_name", "audit_record_action_seq", "audit_record_object_seq",
                  "tool_project_name"):
        db.execute_sql(f"DROP INDEX IF EXISTS {index}")
