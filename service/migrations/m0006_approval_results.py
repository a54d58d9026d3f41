"""The result a held call's decision gave: the approved call's step result, or the declined failure object.

Kept on the approval row the moment the decision's call has answered, so a turn paused for approval can be continued
later, by any instance, after a restart, with exactly the result the person's decision produced (never a body the
model was not given: the result is what the model is handed).
"""

UP = "ALTER TABLE approval ADD COLUMN result TEXT"


def up(db):
    db.execute_sql(UP)


def down(db):
    db.execute_sql("ALTER TABLE approval DROP COLUMN result")
