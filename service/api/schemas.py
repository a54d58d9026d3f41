"""Shapes shared by several resources, for the OpenAPI document."""
from marshmallow import EXCLUDE, Schema, fields


class ViolationSchema(Schema):
    field = fields.String(required=True, metadata={
        "description": 'The field at fault, such as "parameters[1].location"; "" for the request as a whole.'})
    rule = fields.String(required=True, metadata={"description": "A stable rule id, such as type-location-mismatch."})
    message = fields.String(required=True, metadata={"description": "The rule's one sentence."})


class ProblemSchema(Schema):
    """The one JSON error shape: every violated rule at once."""

    code = fields.String(required=True, metadata={"description": "A stable code, such as invalid or not-found."})
    message = fields.String(required=True)
    errors = fields.List(fields.Nested(ViolationSchema), required=True)


class IgnoresUnknownSchema(Schema):
    """A request body whose fields not listed are ignored (the document then allows them), unlike a definition's,
    where an unknown field is refused (`field-unknown`)."""

    class Meta:
        unknown = EXCLUDE


class VersionNumberSchema(Schema):
    version = fields.Integer()
