from marshmallow import Schema, fields


class PinSchema(Schema):
    tool = fields.String(required=True)
    version = fields.Raw(required=True, metadata={"description": 'A published version number, or "draft".'})


class PinsSchema(Schema):
    pins = fields.List(fields.Nested(PinSchema), required=True)


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


class NewProjectSchema(Schema):
    name = fields.String(required=True)
