"""A call record's raw size beside its size (issue 39): for a tool with a response shape, `size_chars` is what the
model got (the shaped result) and `raw_bytes` what the endpoint sent, in bytes once decoded. Null for every other
call, whose size is the body's own."""

UP = "ALTER TABLE call_record ADD COLUMN raw_bytes INTEGER"


def up(db):
    db.execute_sql(UP)


def down(db):
    db.execute_sql("ALTER TABLE call_record DROP COLUMN raw_bytes")
