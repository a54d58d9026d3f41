"""Tool definitions as the API documents them. Validation itself is `service.registry.rules`, shared with MCP."""
from marshmallow import Schema, fields, validate

from service.api.schemas import BoundedText, NameAfter, PageLimit, ViolationSchema
from service.definition import ELEMENT_TYPES, LOCATIONS, METHODS, SCOPES, TYPES
from service.limits import MAX_SEARCH_CHARS, MAX_TOOL_NAME_CHARS


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
    requires_approval = fields.Boolean(load_default=False, metadata={
        "description": "Each call waits for the person in the conversation to approve it; never on a session-start "
                       "tool."})
    required_entitlement = fields.String(allow_none=True)
    parameters = fields.List(fields.Nested(ParameterSchema), metadata={"example": [
        {"name": "status", "type": "string", "location": "query", "required": False}]})
    # What the model sees (docs/shaping.md); absent or null: the spec's behaviour.
    response_shape = fields.String(allow_none=True, metadata={
        "description": "A JMESPath expression applied to a 2xx JSON body; the model gets its result as compact JSON.",
        "example": "orders[*].{id: id, status: status}"})
    error_fields = fields.List(fields.String(), allow_none=True, metadata={
        "description": "Top-level fields of a JSON error body the model may read, as the failure object's details.",
        "example": ["code", "message"]})
    outcome_messages = fields.Dict(keys=fields.String(), values=fields.String(), allow_none=True, metadata={
        "description": 'The tool\'s own sentence per outcome ("<kind>", "<kind>:<status>" or "empty"), as the '
                       "failure object's message.",
        "example": {"refused:404": "There is no such order."}})


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
    next = fields.String(allow_none=True, metadata={
        "description": "The `after` of the next page; null on the last page."})


class VersionSchema(VersionSummarySchema):
    name = fields.String()
    definition = fields.Nested(DefinitionSchema)
    read_only = fields.Boolean()


class RelabelSchema(Schema):
    display_name = fields.String(required=True, allow_none=True, metadata={"example": "Recent orders"})


class ToolQuerySchema(Schema):
    limit = PageLimit(metadata={"description": "Tools on the page."})
    after = NameAfter()
    q = BoundedText(longest=MAX_SEARCH_CHARS, rule="search-too-long", metadata={
        "description": "Only tools whose name or display name holds this text, whatever the case."})
    project = BoundedText(longest=MAX_TOOL_NAME_CHARS, rule="project-name-format", metadata={
        "description": "Only this project's own tools (none for an unknown project)."})


class ImportSchema(Schema):
    """`POST /v1/tools/import`: the document (or its address), how to map it, and whether to write."""

    document = fields.String(metadata={"description": "The OpenAPI 3.0 or 3.1 document, JSON or YAML. It rides in "
                                                      "this body, so the body limit bounds it; use url for more."})
    url = fields.String(metadata={"description": "Where to fetch the document instead, through the same address "
                                                 "guard and deadline as a tool call."})
    server = fields.Raw(metadata={"description": "One of the document's servers, by URL or index, or any absolute "
                                                 "address. Default: each operation's own, else the first."})
    subject_parameter = fields.String(metadata={"description": "The parameter naming the person (e.g. userId): it "
                                                               "becomes the reserved subject, the tool per-user."})
    project = fields.String(metadata={"description": "The project the new tools belong to."})
    operations = fields.List(fields.String(), metadata={"description": 'operationIds or "METHOD /path"; default: '
                                                                       "every ready one."})
    apply = fields.Boolean(load_default=False, metadata={"description": "false (default): a preview, nothing "
                                                                        "written. true: write the drafts."})
    update_existing = fields.Boolean(load_default=False, metadata={
        "description": "A tool that exists gets a new draft from the import instead of being refused as taken."})
    requires_approval = fields.Dict(keys=fields.String(), values=fields.Boolean(), metadata={
        "description": 'The person\'s choice, by operationId or "METHOD /path", of whether each call waits for '
                       "their approval, in place of the importer's."})


class ImportedApprovalSchema(Schema):
    required = fields.Boolean()
    rule = fields.String(metadata={"description": "approval-by-method, approval-reading-method, approval-marked, "
                                                  "approval-marked-off, approval-chosen, approval-kept or "
                                                  "approval-off-kept."})
    why = fields.String(metadata={"description": "The rule's sentence."})


class ImportedOperationSchema(Schema):
    operation = fields.String(metadata={"description": '"METHOD /path"'})
    operation_id = fields.String(allow_none=True)
    tool = fields.String(allow_none=True)
    status = fields.String(validate=validate.OneOf(("ready", "created", "refused", "skipped")))
    action = fields.String(allow_none=True, metadata={"description": "register or new-draft, when ready or created."})
    errors = fields.List(fields.Nested(ViolationSchema), metadata={"description": "Why refused or skipped."})
    not_carried = fields.List(fields.Nested(ViolationSchema), metadata={
        "description": "Optional parts of the operation the tool does not carry, each with the reason."})
    kept = fields.List(fields.Nested(ViolationSchema), metadata={
        "description": "For a new draft of an existing tool: what it keeps of the latest version because the "
                       "document does not say (requires_approval, required_entitlement), each with the reason."})
    # Named apart from `partial`, which marshmallow's Schema already uses for partial loading.
    lost = fields.List(fields.Nested(ViolationSchema), attribute="partial", data_key="partial", metadata={
        "description": "A ready or created tool that loses the operation's whole request body: what is lost and "
                       "why. Empty otherwise."})
    approval = fields.Nested(ImportedApprovalSchema, allow_none=True, metadata={
        "description": "Whether each call would wait for the person's approval, and why; null when nothing maps."})
    definition = fields.Dict(allow_none=True, metadata={"description": "The registration it becomes."})


class ImportedDocumentSchema(Schema):
    openapi = fields.String()
    title = fields.String(allow_none=True)
    version = fields.String(allow_none=True)
    server = fields.String(allow_none=True)
    notes = fields.List(fields.Nested(ViolationSchema), metadata={
        "description": "What holds for the whole document, said once: its credentials are not carried "
                       "(auth-not-carried), its other servers are not used (servers-ignored)."})


class ImportResultSchema(Schema):
    document = fields.Nested(ImportedDocumentSchema)
    operations = fields.List(fields.Nested(ImportedOperationSchema))
