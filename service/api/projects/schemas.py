from marshmallow import Schema, fields

from service.api.schemas import IgnoresUnknownSchema, NameAfter, PageLimit


class PinSchema(Schema):
    tool = fields.String(required=True, metadata={"example": "get_orders"})
    version = fields.Raw(required=True, metadata={"description": 'A published version number, or "draft".',
                                                  "example": "draft"})


class PinsSchema(Schema):
    pins = fields.List(fields.Nested(PinSchema), required=True)


class SavePinsSchema(IgnoresUnknownSchema, PinsSchema):
    """The body of a save: its pins (each pin's own fields are checked, unknown ones refused)."""


class ProjectDraftSchema(PinsSchema):
    revision = fields.Integer()
    updated_at = fields.Float()
    updated_by = fields.String()


class ProjectVersionSchema(PinsSchema):
    version = fields.Integer()
    published_at = fields.Float()
    published_by = fields.String()


class ProjectSchema(Schema):
    name = fields.String()
    draft = fields.Nested(ProjectDraftSchema, allow_none=True)
    versions = fields.List(fields.Nested(ProjectVersionSchema))


class ProjectListSchema(Schema):
    projects = fields.List(fields.Nested(ProjectSchema))
    next = fields.String(allow_none=True, metadata={
        "description": "The `after` of the next page; null on the last page."})


class ProjectQuerySchema(Schema):
    limit = PageLimit(metadata={"description": "Projects on the page."})
    after = NameAfter()


class NewProjectSchema(IgnoresUnknownSchema):
    name = fields.String(required=True, metadata={"example": "shop"})
