"""Shapes of the operations API, for the OpenAPI document and for reading query strings."""
from marshmallow import Schema, fields, validate

from service.api.schemas import PageLimit, StoredInteger, Text
from service.limits import DEFAULT_PAGE, MAX_PAGE, MAX_ROW_ID
from service.records import audit, calls


class CallQuerySchema(Schema):
    conversation = Text()
    turn = Text()
    tool = Text()
    subject = Text()
    kind = fields.String(validate=validate.OneOf(calls.KINDS), metadata={"description": 'A failure kind, or "ok".'})
    since = fields.Float(metadata={"description": "Unix seconds, inclusive."})
    until = fields.Float(metadata={"description": "Unix seconds, exclusive."})
    before = StoredInteger(maximum=MAX_ROW_ID, metadata={"description": "Paging: calls older than this call id "
                                                                        "(`next`)."})
    limit = fields.Integer(load_default=100, validate=validate.Range(1, MAX_PAGE))


class CallSummaryQuerySchema(Schema):
    since = fields.Float(metadata={
        "description": "Unix seconds, inclusive; by default, the first call rolled up (a day before `until` at most)."})
    until = fields.Float(metadata={"description": "Unix seconds, exclusive; by default, now."})
    tool = Text()
    project = Text(metadata={"description": "A project's name: the calls of its conversations."})
    limit = fields.Integer(load_default=DEFAULT_PAGE, validate=validate.Range(1, MAX_PAGE), metadata={
        "description": "The most tools answered, most called first (`tools_total` counts them all)."})


class SummaryBucketSchema(Schema):
    start = fields.Integer(metadata={"description": "Unix seconds: the bucket spans `bucket_seconds` from here."})
    counts = fields.Dict(keys=fields.String(), values=fields.Integer(),
                         metadata={"description": 'Calls by kind ("ok" or a failure kind); kinds with none left out.'})


class SummaryToolSchema(Schema):
    tool = fields.String()
    calls = fields.Integer()
    kinds = fields.Dict(keys=fields.String(), values=fields.Integer())
    p50_ms = fields.Float(allow_none=True, metadata={
        "description": "From the summed latency histograms: within 12.3% of the exact median (0.5 ms under 1 ms)."})
    p95_ms = fields.Float(allow_none=True, metadata={"description": "As p50_ms, the 95th percentile."})


class CallSummarySchema(Schema):
    since = fields.Integer(metadata={"description": "The window, widened to whole buckets: its start."})
    until = fields.Integer(metadata={"description": "The window's end (exclusive)."})
    bucket_seconds = fields.Integer(metadata={"description": "An hour, or whole days: at most about 100 buckets."})
    buckets = fields.List(fields.Nested(SummaryBucketSchema))
    tools = fields.List(fields.Nested(SummaryToolSchema),
                        metadata={"description": "Most calls first, `limit` at most."})
    tools_total = fields.Integer(metadata={"description": "How many tools had calls in the window and filters."})


class CallRecordSchema(Schema):
    id = fields.Integer()
    at = fields.Float()
    conversation = fields.String()
    turn = fields.String()
    tool = fields.String()
    version = fields.Integer(allow_none=True, metadata={"description": "Null: the tool's draft, or no such tool."})
    session_start = fields.Boolean()
    subject = fields.String()
    anonymous = fields.Boolean()
    kind = fields.String(metadata={"description": '"ok", or the failure kind.'})
    status = fields.Integer(allow_none=True, metadata={"description": "The endpoint's HTTP status, if it answered."})
    latency_ms = fields.Float()
    size = fields.Raw(metadata={"description": 'Characters in the response (for a tool with a response shape, in '
                                               'its shaped result, what the model got), "over the cap", or null.'})
    raw_size = fields.Integer(allow_none=True, metadata={
        "description": "For a tool with a response shape, the bytes of the body the endpoint sent (decoded), beside "
                       "the shaped size; null for every other call."})
    jti = fields.String(allow_none=True, metadata={"description": "The call assertion's id (never the token)."})
    approval = fields.String(allow_none=True, metadata={
        "description": "The person's approval the call was sent or declined on; null for a call that needed none."})


class CallPageSchema(Schema):
    calls = fields.List(fields.Nested(CallRecordSchema))
    next = fields.Integer(allow_none=True)


class AuditQuerySchema(Schema):
    object_type = fields.String(validate=validate.OneOf(audit.OBJECT_TYPES))
    object = Text()
    action = fields.String(validate=validate.OneOf(audit.ACTIONS))
    before = StoredInteger(metadata={"description": "Paging: records before this sequence number (`next`)."})
    limit = PageLimit(metadata={"description": "Records on the page."})


class ActorSchema(Schema):
    kind = fields.String(metadata={"description": "person or agent."})
    role = fields.String()
    key_id = fields.String(metadata={"description": "The API key's public id (cli: the command line)."})


class AuditObjectSchema(Schema):
    type = fields.String()
    name = fields.String()
    version = fields.Integer(allow_none=True)


class AuditRecordSchema(Schema):
    seq = fields.Integer()
    at = fields.Float()
    action = fields.String()
    actor = fields.Nested(ActorSchema)
    object = fields.Nested(AuditObjectSchema)
    before_hash = fields.String(allow_none=True)
    after_hash = fields.String(allow_none=True)
    prev_hash = fields.String()
    hash = fields.String()


class AuditPageSchema(Schema):
    records = fields.List(fields.Nested(AuditRecordSchema))
    next = fields.Integer(allow_none=True)


class ToolHistoryQuerySchema(Schema):
    before = StoredInteger(metadata={"description": "Paging: the tool's records before this sequence number "
                                                    "(`next`)."})
    limit = PageLimit(metadata={"description": "Records on the page."})


class ToolHistorySchema(Schema):
    tool = fields.String()
    records = fields.List(fields.Nested(AuditRecordSchema))
    next = fields.Integer(allow_none=True, metadata={
        "description": "The `before` of the next, older page of records; null on the last page."})
    versions = fields.List(fields.Dict())


class ChangeSchema(Schema):
    change = fields.String()
    parameter = fields.String(allow_none=True)
    before = fields.Raw(allow_none=True)
    after = fields.Raw(allow_none=True)
    breaking = fields.Boolean()
    affects = fields.List(fields.String(), metadata={"description": "model, endpoint, or neither."})
    message = fields.String()


class DiffQuerySchema(Schema):
    from_ = fields.String(data_key="from", required=True, metadata={"description": 'A version number or "draft".'})
    to = fields.String(required=True, metadata={"description": 'A version number or "draft".'})


class DiffSchema(Schema):
    tool = fields.String()
    from_ = fields.Raw(data_key="from", attribute="from")
    to = fields.Raw()
    breaking = fields.Boolean()
    changes = fields.List(fields.Nested(ChangeSchema))
    text = fields.String(metadata={"description": "A unified diff of the two definitions."})


class PinningSchema(Schema):
    project = fields.String()
    version = fields.Integer()
    published_at = fields.Float()


class VersionImpactSchema(Schema):
    tool = fields.String()
    version = fields.Integer()
    project_versions = fields.List(fields.Nested(PinningSchema))
    project_drafts = fields.List(fields.String())


class DraftImpactSchema(Schema):
    tool = fields.String()
    revision = fields.Integer()
    against = fields.Integer(allow_none=True, metadata={"description": "The latest version, or null if none."})
    breaking = fields.Boolean()
    changes = fields.List(fields.Nested(ChangeSchema))
    latest_pinned_by = fields.List(fields.Nested(PinningSchema))
    draft_pinned_by = fields.List(fields.String())


class WhyQuerySchema(Schema):
    version = fields.String(metadata={"description": 'A published version number or "draft"; default the latest.'})
    subject = Text(load_default="")
    entitlement = fields.List(Text(), load_default=list,
                              metadata={"description": "Repeat for each entitlement the session carries."})
    anonymous = fields.Boolean(load_default=False)


class ReasonSchema(Schema):
    reason = fields.String()
    message = fields.String()


class OfferExplainedSchema(Schema):
    tool = fields.String()
    pinned = fields.Raw(allow_none=True, metadata={"description": 'The pinned version, "draft", or null.'})
    offered = fields.Boolean()
    runs_at_session_start = fields.Boolean()
    required_entitlement = fields.String(allow_none=True)
    reasons = fields.List(fields.Nested(ReasonSchema))


class WhySchema(Schema):
    project = fields.String()
    version = fields.Raw()
    claims = fields.Dict()
    tools = fields.List(fields.Nested(OfferExplainedSchema))


class HealthSchema(Schema):
    status = fields.String()


class ReadySchema(Schema):
    status = fields.String()
    database = fields.String()
    schema = fields.String()
    work = fields.String(metadata={"description": "`admitting`, or `saturated` while the process cannot take work."})
    problems = fields.List(fields.String())
