"""/v1/conversations: open a conversation, read the offered tools, start turns, run model steps, and send
messages for the platform to run whole turns with the configured model."""
from __future__ import annotations

import json
from functools import wraps
from itertools import chain
from typing import Any, Callable

from flask import Response, current_app, g, jsonify, stream_with_context
from flask.views import MethodView
from flask_smorest import Blueprint
from marshmallow import Schema, fields, validate

from service.api.body import json_body, json_response
from service.api.document import SESSION_TOKEN, authenticated_by, route_refusal
from service.api.schemas import IgnoresUnknownSchema
from service.catalogue import violation
from service.conversations import (
    Dispatcher,
    Session,
    TurnLimits,
    authenticate_session,
    decide,
    get_conversation,
    get_conversation_turn,
    history,
    list_approvals,
    offered_tools,
    open_conversation,
    parse_calls,
    parse_text,
    run_model_step,
    start_turn,
    turn_events,
)
from service.conversations.turns import MAX_MESSAGE_CHARS
from service.database import UNAVAILABLE, unavailable_error
from service.errors import ServiceError
from service.http import DISPATCHER_KEY, app_config, bearer_token
from service.limits import MAX_CALLS_PER_STEP
from service.llm import adapter_for

blp = Blueprint("conversations", __name__, url_prefix="/v1/conversations",
                description="Conversations opened with a session token.")


class OpenSchema(IgnoresUnknownSchema):
    project = fields.String(required=True, metadata={"example": "shop"})
    version = fields.Raw(metadata={"description": 'A published version number, or "draft"; default the latest.',
                                   "example": 1})


class OfferedToolSchema(Schema):
    name = fields.String()
    description = fields.String()
    parameters = fields.Dict()


class ConversationSchema(Schema):
    id = fields.String()
    context = fields.List(fields.Dict())
    tools = fields.List(fields.Nested(OfferedToolSchema))


class ToolsSchema(Schema):
    tools = fields.List(fields.Nested(OfferedToolSchema))


class TurnSchema(Schema):
    turn = fields.String()


class CallSchema(IgnoresUnknownSchema):
    id = fields.String(required=True, metadata={"example": "call_1"})
    name = fields.String(required=True, metadata={"example": "get_orders"})
    arguments = fields.Raw(metadata={"example": {"status": "open"}})


class StepSchema(IgnoresUnknownSchema):
    calls = fields.List(fields.Nested(CallSchema), required=True, validate=validate.Length(1, MAX_CALLS_PER_STEP))


class ResultsSchema(Schema):
    results = fields.List(fields.Dict())


def current_session() -> Session:
    """The verified session token of this request, or 401."""
    if "session" not in g:
        g.session = authenticate_session(bearer_token(), app_config(current_app))
    return g.session


def with_session(view):
    """Refuse with 401 unless a valid session token is presented, before anything else is read (and say so in the
    OpenAPI document)."""

    @wraps(view)
    def guarded(*args, **kwargs):
        current_session()
        return view(*args, **kwargs)

    return authenticated_by(SESSION_TOKEN)(guarded)


def dispatcher():
    return current_app.extensions[DISPATCHER_KEY]


@blp.route("")
class ConversationViews(MethodView):
    @blp.doc(requestBody={"content": {"application/json": {"schema": OpenSchema}}})
    @blp.response(201, ConversationSchema)
    @blp.alt_response(404, **route_refusal("`not-found`: no such project, or no such version of it."))
    @blp.alt_response(409, **route_refusal("`project-no-draft` or `project-unpublished`: no such version to open."))
    @blp.alt_response(429, "TooManyCalls")
    @with_session
    def post(self):
        """Open a conversation: runs the session-start tools the token is entitled to, in parallel"""
        session = current_session()
        body = json_body()
        body = body if isinstance(body, dict) else {}
        conversation = open_conversation(session, body.get("project"), body.get("version"), dispatcher())
        return {"id": conversation.id, "context": conversation.context,
                "tools": offered_tools(conversation, session)}


@blp.route("/<conversation_id>")
class ConversationByIdViews(MethodView):
    @blp.response(200, ConversationSchema)
    @with_session
    def get(self, conversation_id):
        """Read a conversation: its stored session-start context and the tools offered now"""
        session = current_session()
        conversation = get_conversation(session, conversation_id)
        return {"id": conversation.id, "context": conversation.context,
                "tools": offered_tools(conversation, session)}


@blp.route("/<conversation_id>/tools")
class ConversationToolViews(MethodView):
    @blp.response(200, ToolsSchema)
    @with_session
    def get(self, conversation_id):
        """The tools offered to the model, filtered by this token's entitlements, without the subject"""
        session = current_session()
        # Plain JSON-ready data (text the registry checked, no numbers): written by orjson, without a per-item schema
        # dump (500 tools: 5.7 ms with jsonify's encoder and its sorting, 2.0 ms so; bench/registry).
        return json_response({"tools": offered_tools(get_conversation(session, conversation_id), session)})


@blp.route("/<conversation_id>/turns")
class TurnViews(MethodView):
    @blp.response(201, TurnSchema)
    @with_session
    def post(self, conversation_id):
        """Start a turn (its id is random, not a counter)"""
        return {"turn": start_turn(get_conversation(current_session(), conversation_id)).id}


@blp.route("/<conversation_id>/turns/<turn_id>/steps")
class StepViews(MethodView):
    @blp.doc(requestBody={"content": {"application/json": {"schema": StepSchema}}})
    @blp.response(200, ResultsSchema)
    @blp.alt_response(429, "TooManyCalls")
    @with_session
    def post(self, conversation_id, turn_id):
        """Run one model step: every call in parallel, results in the calls' order"""
        return json_response(step_answer(current_session(), conversation_id, turn_id, json_body, dispatcher()))


def step_answer(session: Session, conversation_id: str, turn_id: str, body: Callable[[], Any],
                dispatcher: Dispatcher) -> dict[str, Any]:
    """The answer to one model step, built the same for both of its paths: the view above and the plain path ahead
    of Flask (step_route.py). `body` reads the request's JSON value: only once the turn is known to be the session's,
    so a stranger's body is never read."""
    conversation, turn = get_conversation_turn(session, conversation_id, turn_id)
    calls = parse_calls(body())
    return {"results": run_model_step(session, conversation, turn, calls, dispatcher)}


class DecisionSchema(IgnoresUnknownSchema):
    decision = fields.String(required=True, validate=validate.OneOf(["approve", "decline"]),
                             metadata={"example": "approve"})


class ApprovalSchema(Schema):
    id = fields.String()
    status = fields.String(metadata={"description": "pending, approved, declined, or expired (pending past its "
                                                    "expiry: it can no longer be decided)."})
    tool = fields.String()
    display_name = fields.String()
    description = fields.String()
    version = fields.Integer(allow_none=True, metadata={"description": "The tool version; null for its draft."})
    call_id = fields.String()
    arguments = fields.Raw(metadata={"description": "Exactly the arguments an approval sends."})
    turn = fields.String()
    created_at = fields.Float()
    expires_at = fields.Float()
    decided_at = fields.Float(allow_none=True)


class ApprovalsSchema(Schema):
    approvals = fields.List(fields.Nested(ApprovalSchema))


class DecidedSchema(Schema):
    approval = fields.Nested(ApprovalSchema)
    result = fields.Dict(metadata={"description": "The call's result as a step's: `output`, or `error` (kind "
                                                  "`declined` when declined)."})


@blp.route("/<conversation_id>/approvals")
class ApprovalViews(MethodView):
    @blp.response(200, ApprovalsSchema)
    @with_session
    def get(self, conversation_id):
        """The conversation's held calls, pending and decided, with the tool and the exact arguments"""
        return jsonify({"approvals": list_approvals(current_session(), conversation_id)})


@blp.route("/<conversation_id>/approvals/<approval_id>")
class ApprovalByIdViews(MethodView):
    @blp.doc(requestBody={"content": {"application/json": {"schema": DecisionSchema}}})
    @blp.response(200, DecidedSchema)
    @blp.alt_response(403, **route_refusal("`not-entitled`: the token lacks the entitlement the tool requires."))
    @blp.alt_response(404, **route_refusal("`not-found`: no such approval in this subject's conversation."))
    @blp.alt_response(409, **route_refusal("`approval-decided` or `approval-expired`: nothing was sent."))
    @blp.alt_response(429, "TooManyCalls")
    @with_session
    def post(self, conversation_id, approval_id):
        """Approve or decline a held call: approve sends exactly that call once, its assertion carrying `approval`"""
        return json_response(decide(current_session(), conversation_id, approval_id, json_body(), dispatcher()))


class MessageSchema(IgnoresUnknownSchema):
    text = fields.String(validate=validate.Length(1, MAX_MESSAGE_CHARS),
                         metadata={"example": "Where is my order?",
                                   "description": "The person's message. Leave it out (`{}`) to continue the turn "
                                                  "paused `awaiting-approval`, once each of its approvals is "
                                                  "decided: the model is handed the decided results and the turn "
                                                  "goes on, under the same turn id."})
    stream = fields.Boolean(metadata={"description": "Answer with server-sent events as the turn runs: "
                                                     "`turn`, `step`, `call`, and last `reply` (the same "
                                                     "object as the plain answer)."})


class TurnResultSchema(Schema):
    turn = fields.String()
    reply = fields.String(allow_none=True, metadata={"description": "The model's answer; null when stopped."})
    steps = fields.List(fields.Dict(), metadata={"description": '[{"calls", "results", "started_at", '
                                                                '"elapsed_ms"}]'})
    stopped = fields.Dict(allow_none=True, metadata={"description": 'null, or {"reason", "message"} when the '
                                                                    'platform stopped the turn; reason '
                                                                    '`awaiting-approval` pauses it.'})
    approvals = fields.List(fields.Nested(ApprovalSchema), metadata={
        "description": "When paused `awaiting-approval`: each approval the turn awaits; otherwise empty."})
    decided = fields.List(fields.Nested(DecidedSchema), metadata={
        "description": "When continuing a paused turn: each held call's decision and the result the model was "
                       "handed in its place (an expired approval as `declined`); otherwise empty."})


#: One server-sent event of a streamed turn (what `event_stream` writes).
TURN_EVENT = {"type": "object", "required": ["event", "data"], "properties": {
    "event": {"type": "string", "enum": ["turn", "step", "call", "reply", "error"]},
    "data": {"type": "string", "description": "JSON: `turn` {turn}; `step` {step, calls}; `call` {step, and the "
                                              "call's result}; `reply` the whole turn, as without streaming; "
                                              "`error` the one error shape."}}}


class HistorySchema(Schema):
    messages = fields.List(fields.Dict())


#: Where an app keeps its model adapter, built once (it keeps a connection pool).
MODEL_ADAPTER = "toolgate_model"


def prepare_model_adapter(app) -> None:
    """Build the configured model's adapter with the app, when one is configured. Its client library's import takes
    seconds of CPU, which on the first turn would hold every request of the worker as long."""
    try:
        app.extensions[MODEL_ADAPTER] = adapter_for(app_config(app))
    except ServiceError:
        pass  # no model, or one of no known provider: each turn answers 503 saying which (model_adapter)


def model_adapter():
    """The configured model's adapter; 503 when none is."""
    extensions = current_app.extensions
    if MODEL_ADAPTER not in extensions:
        extensions[MODEL_ADAPTER] = adapter_for(app_config(current_app))
    return extensions[MODEL_ADAPTER]


def event_stream(events):
    """Server-sent events, one per turn event; a refusal mid-turn ends the stream with an `error` event."""
    try:
        for kind, data in events:
            yield f"event: {kind}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n"
    except (ServiceError, *UNAVAILABLE) as failure:
        error = failure if isinstance(failure, ServiceError) else unavailable_error()
        yield f"event: error\ndata: {json.dumps(error.to_dict(), separators=(',', ':'))}\n\n"


@blp.route("/<conversation_id>/messages")
class MessageViews(MethodView):
    @blp.response(200, HistorySchema)
    @with_session
    def get(self, conversation_id):
        """The conversation's history: the person's messages, the model's, tool results and stopped turns"""
        return {"messages": history(get_conversation(current_session(), conversation_id))}

    @blp.doc(requestBody={"content": {"application/json": {"schema": MessageSchema}}},
             responses={"200": {"description": "The turn; with `stream: true`, its events as they happen.",
                                "content": {"application/json": {"schema": TurnResultSchema},
                                            "text/event-stream": {"schema": TURN_EVENT}}}})
    @blp.response(200, TurnResultSchema)
    @blp.alt_response(409, **route_refusal(
        "`turn-in-progress`: the conversation is already running a turn. `approvals-pending`: a turn is paused for "
        "approvals not yet decided (each named as `approvals/<id>` in `errors`). `turn-awaits-continue`: a message "
        "while the paused turn's approvals are all decided; continue it first. `nothing-to-continue`: a message "
        "without text, and no turn is paused. Each changes nothing."))
    @blp.alt_response(503, **route_refusal("`model-not-configured`: no model is configured to run turns; or "
                                     "`database-unavailable` (with `Retry-After`)."))
    @with_session
    def post(self, conversation_id):
        """Send the person's message, or continue a paused turn: the platform runs one whole turn with the model"""
        session = current_session()
        conversation = get_conversation(session, conversation_id)
        body = json_body()
        text = parse_text(body)
        stream = body.get("stream", False)
        if not isinstance(stream, bool):
            raise ServiceError(422, "invalid", "A message's `stream` is true or false.",
                               [violation("stream", "field-type")])
        events = turn_events(session, conversation, text, model_adapter(), dispatcher(),
                             TurnLimits.from_config(app_config(current_app)))
        first = next(events)  # takes the conversation's turn lock: a 409 comes before anything is streamed
        if stream:
            return Response(stream_with_context(event_stream(chain([first], events))),
                            mimetype="text/event-stream", headers={"Cache-Control": "no-cache"})
        result = first[1]
        for _kind, result in events:  # noqa: B007 (the last event's is the turn's result)
            pass
        return result
