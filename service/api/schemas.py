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


class RepinSchema(Schema):
    project = fields.String(metadata={"description": "A project whose draft version pinned the tool's draft."})
    tool = fields.String()
    version = fields.Integer(metadata={"description": "The version that draft became, which the project's draft "
                                                      "now pins."})


class PublishedSchema(VersionNumberSchema):
    repinned = fields.List(fields.Nested(RepinSchema), metadata={
        "description": "Every project draft that pinned the published draft, now pinning its version."})


class ToolVersionSchema(Schema):
    tool = fields.String()
    version = fields.Integer()


class ProjectPublishedSchema(PublishedSchema):
    published = fields.List(fields.Nested(ToolVersionSchema), metadata={
        "description": "The pinned tool drafts this publish published, each with the version it became."})
