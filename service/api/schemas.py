"""Shapes shared by several resources, for the OpenAPI document."""
from marshmallow import Schema, fields


class ViolationSchema(Schema):
    field = fields.String()
    rule = fields.String()
    message = fields.String()


class ProblemSchema(Schema):
    """The one JSON error shape: every violated rule at once."""

    code = fields.String()
    message = fields.String()
    errors = fields.List(fields.Nested(ViolationSchema))


class VersionNumberSchema(Schema):
    version = fields.Integer()
