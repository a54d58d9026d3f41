"""Tool definitions as the API documents them. Validation itself is `service.registry.rules`, shared with MCP."""
from marshmallow import Schema, fields, validate

from ...definition import ELEMENT_TYPES, LOCATIONS, METHODS, SCOPES, TYPES


class ParameterSchema(Schema):
    name = fields.String(required=True, metadata={"example": "status"})
    type = fields.String(validate=validate.OneOf(TYPES))
    location = fields.String(validate=validate.OneOf(LOCATIONS))
    element_type = fields.String(validate=validate.OneOf(ELEMENT_TYPES), allow_none=True)
    required = fields.Boolean(load_default=True)
    description = fields.String()


class DefinitionSchema(Schema):
    name = fields.String(required=True, metadata={"description": "Letters, digits, underscores; set once.",
                                                  "example": "get_orders"})
    description = fields.String(required=True, metadata={"description": "Written for the model.",
                                                         "example": "The person's recent orders."})
    method = fields.String(required=True, validate=validate.OneOf(METHODS), metadata={"example": "GET"})
    url = fields.String(required=True, metadata={"example": "https://api.example.com/orders"})
    scope = fields.String(validate=validate.OneOf(SCOPES), load_default="shared")
    runs_at_session_start = fields.Boolean(load_default=False)
    required_entitlement = fields.String(allow_none=True)
    parameters = fields.List(fields.Nested(ParameterSchema), metadata={"example": [
        {"name": "status", "type": "string", "location": "query", "required": False}]})


class RegistrationSchema(DefinitionSchema):
    display_name = fields.String(allow_none=True, metadata={"example": "Recent orders"})
    project = fields.String(allow_none=True)


class DraftSchema(Schema):
    definition = fields.Nested(DefinitionSchema)
    revision = fields.Integer()
    etag = fields.String()
    based_on = fields.Integer(allow_none=True)
    updated_at = fields.Float()
    updated_by = fields.String()


class VersionSummarySchema(Schema):
    version = fields.Integer()
    published_at = fields.Float()
    published_by = fields.String()


class ToolSchema(Schema):
    name = fields.String()
    display_name = fields.String()
    project = fields.String(allow_none=True)
    draft = fields.Nested(DraftSchema, allow_none=True)
    versions = fields.List(fields.Nested(VersionSummarySchema))


class ToolListSchema(Schema):
    tools = fields.List(fields.Nested(ToolSchema))


class VersionSchema(VersionSummarySchema):
    name = fields.String()
    definition = fields.Nested(DefinitionSchema)
    read_only = fields.Boolean()


class RelabelSchema(Schema):
    display_name = fields.String(required=True, allow_none=True, metadata={"example": "Recent orders"})


class ToolQuerySchema(Schema):
    project = fields.String()
