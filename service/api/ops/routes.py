"""Operations over HTTP: the call log, the audit trail, impact and diffs, why not offered, metrics and health."""
from __future__ import annotations

from flask import Response, request
from flask.views import MethodView
from flask_smorest import Blueprint
from marshmallow import RAISE

from service import registry
from service.api.auth import current_principal, requires
from service.api.document import route_refusal
from service.api.ops.schemas import (
    AuditPageSchema,
    AuditQuerySchema,
    CallPageSchema,
    CallQuerySchema,
    CallSummaryQuerySchema,
    CallSummarySchema,
    DiffQuerySchema,
    DiffSchema,
    DraftImpactSchema,
    HealthSchema,
    ReadySchema,
    ToolHistoryQuerySchema,
    ToolHistorySchema,
    VersionImpactSchema,
    WhyQuerySchema,
    WhySchema,
)
from service.catalogue import RULES, Violation, violation
from service.errors import ServiceError
from service.http import admitting
from service.limits import LATEST_SUMMARY_TIME, MAX_STORED_INTEGER
from service.models import now
from service.ops import health, impact, why
from service.records import audit, calls, metrics, summary
from service.roles import READ, READ_CALLS
from service.text import whole_number

blp = Blueprint("ops", __name__, description="Operations: call log, audit trail, impact, why not offered, health.")


VERSION_FORMAT = RULES["version-format"]


def _ref(value: str, field: str) -> int | str:
    """A version reference from a query string: a published version number, or "draft"."""
    if value == impact.DRAFT:
        return value
    if value.isascii() and value.isdigit():
        number = whole_number(value, MAX_STORED_INTEGER)
        if number is None:  # past what the database stores: it was an overflow there
            raise ServiceError(422, "invalid", RULES["number-range"], [violation(field, "number-range")])
        return number
    raise ServiceError(422, "invalid", VERSION_FORMAT, [Violation(field, "version-format", VERSION_FORMAT)])


def _next_seq(rows: list, query: dict) -> int | None:
    """The `before` of the next page: the last record's sequence number when a record past the page was read (the
    query asked for `limit` + 1), so the last page says null rather than leading to an empty one."""
    return rows[query["limit"] - 1].seq if len(rows) > query["limit"] else None


@blp.route("/v1/calls")
class CallViews(MethodView):
    @blp.arguments(CallQuerySchema, location="query")
    @blp.response(200, CallPageSchema)
    @requires(READ_CALLS)
    def get(self, query):
        """The call log, newest first: by conversation, turn, tool, subject, kind and time (admin keys)"""
        principal = current_principal()
        limit = query.pop("limit")
        found = calls.find_calls(principal.organization, calls.CallQuery(
            before_id=query.pop("before", None), limit=limit, **query))
        return {"calls": [calls.call_view(row) for row in found],
                "next": found[-1].id if len(found) == limit else None}


def _summary_window(query: dict) -> None:
    """The summary's times, checked once the key is (a schema's own check would answer 422 before 401)."""
    for name in ("since", "until"):
        if not 0 <= query.get(name, 0) <= LATEST_SUMMARY_TIME:
            raise ServiceError(422, "invalid", RULES["number-range"], [violation(name, "number-range")])
    if "since" in query and "until" in query and query["until"] <= query["since"]:
        raise ServiceError(422, "invalid", RULES["time-order"], [violation("until", "time-order")])


@blp.route("/v1/calls/summary")
class CallSummaryViews(MethodView):
    # A filter the summary cannot apply (a conversation, a subject: the rollups do not hold them) is refused, never
    # silently left out of what the numbers cover.
    @blp.arguments(CallSummaryQuerySchema, location="query", unknown=RAISE)
    @blp.response(200, CallSummarySchema)
    @requires(READ_CALLS)
    def get(self, query):
        """Calls over time by kind, and per tool its calls, kinds and p50/p95 latency, from the rollups (admin
        keys)"""
        organization = current_principal().organization
        _summary_window(query)
        project = None
        if "project" in query:
            project = summary.project_id(organization, query["project"])
            if project is None:
                raise ServiceError(422, "invalid", RULES["project-unknown"], [violation("project", "project-unknown")])
        return summary.summarize(organization, summary.SummaryQuery(
            since=query.get("since"), until=query.get("until"), tool=query.get("tool"), project=project,
            limit=query["limit"]), now())


@blp.route("/v1/audit")
class AuditViews(MethodView):
    @blp.arguments(AuditQuerySchema, location="query")
    @blp.response(200, AuditPageSchema)
    @requires(READ)
    def get(self, query):
        """The audit trail, newest first: every registry change, its actor and its hashes"""
        rows = audit.history(current_principal().organization, object_type=query.get("object_type"),
                             object_name=query.get("object"), action=query.get("action"),
                             before_seq=query.get("before"), limit=query["limit"] + 1)
        return {"records": [audit.record_view(r) for r in rows[:query["limit"]]], "next": _next_seq(rows, query)}


@blp.route("/v1/tools/<name>/history")
class ToolHistoryViews(MethodView):
    @blp.arguments(ToolHistoryQuerySchema, location="query")
    @blp.response(200, ToolHistorySchema)
    @requires(READ)
    def get(self, query, name):
        """A tool's history: a page of its audit records, newest first (`next` is the `before` of the older page),
        and its published versions"""
        organization = current_principal().organization
        tool = registry.get_tool(organization, name)
        rows = audit.history(organization, object_type=audit.TOOL, object_name=name, before_seq=query.get("before"),
                             limit=query["limit"] + 1)
        return {"tool": name, "records": [audit.record_view(r) for r in rows[:query["limit"]]],
                "next": _next_seq(rows, query), "versions": registry.tool_view(tool)["versions"]}


@blp.route("/v1/tools/<name>/diff")
class ToolDiffViews(MethodView):
    @blp.arguments(DiffQuerySchema, location="query")
    @blp.response(200, DiffSchema)
    @requires(READ)
    def get(self, query, name):
        """A readable diff between any two versions of a tool (numbers, or "draft")"""
        return impact.diff(current_principal().organization, name, _ref(query["from_"], "from"),
                           _ref(query["to"], "to"))


@blp.route("/v1/tools/<name>/versions/<version:number>/impact")
class VersionImpactViews(MethodView):
    @blp.response(200, VersionImpactSchema)
    @requires(READ)
    def get(self, name, number):
        """The project versions that pin this tool version, and the project drafts that would"""
        return impact.version_impact(current_principal().organization, name, number)


@blp.route("/v1/tools/<name>/draft/impact")
class DraftImpactViews(MethodView):
    @blp.response(200, DraftImpactSchema)
    @blp.alt_response(409, **route_refusal("`no-draft`: the tool has no draft."))
    @requires(READ)
    def get(self, name):
        """What publishing the draft would change against the latest version, breaking changes marked"""
        return impact.draft_impact(current_principal().organization, name)


@blp.route("/v1/projects/<name>/why-not-offered")
class WhyViews(MethodView):
    @blp.arguments(WhyQuerySchema, location="query")
    @blp.response(200, WhySchema)
    @blp.alt_response(409, **route_refusal("`project-no-draft` or `project-unpublished`: no such version to explain."))
    @requires(READ)
    def get(self, query, name):
        """For a project version and a session's claims: each tool, whether it is offered, and why not"""
        version = query.get("version")
        claims = why.Claims(subject=query["subject"], entitlements=frozenset(query["entitlement"]),
                            anonymous=query["anonymous"])
        return why.explain(current_principal().organization, name,
                           None if version is None else _ref(version, "version"), claims)


@blp.route("/metrics")
class MetricsViews(MethodView):
    @blp.doc(security=[], responses={"200": {"description": "The Prometheus text format.",
                                             "content": {"text/plain": {"schema": {"type": "string"}}}}})
    def get(self):
        """Metrics in the Prometheus text format"""
        body, content_type = metrics.exposition(request.headers.get("Accept", ""))
        return Response(body, content_type=content_type)


@blp.route("/healthz")
class AliveViews(MethodView):
    @blp.doc(security=[])
    @blp.response(200, HealthSchema)
    def get(self):
        """Alive: the process answers"""
        return {"status": "alive"}


@blp.route("/readyz")
class ReadyViews(MethodView):
    @blp.doc(security=[])
    @blp.response(200, ReadySchema)
    @blp.alt_response(503, schema=ReadySchema, description="Not ready: the database, its schema, or work saturated.")
    def get(self):
        """Ready: the database answers, its schema is current and the process can admit work"""
        state = health.readiness(admitting=admitting())
        return state.to_dict(), (200 if state.ready else 503)
