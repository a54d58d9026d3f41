"""/v1/tools: register, read, relabel, save the draft, start a draft, publish, read a published version."""
from __future__ import annotations

from flask import current_app, request
from flask.views import MethodView
from flask_smorest import Blueprint

from service import importing, registry
from service.api.auth import current_principal, requires
from service.api.body import json_body, json_response
from service.api.document import route_refusal
from service.api.dumping import compile_dump
from service.api.schemas import PublishedSchema
from service.api.tools.schemas import (
    ImportResultSchema,
    ImportSchema,
    RegistrationSchema,
    RelabelSchema,
    ToolListSchema,
    ToolQuerySchema,
    ToolSchema,
    VersionSchema,
)
from service.http import DISPATCHER_KEY, client_left
from service.roles import PUBLISH, READ, WRITE_DRAFTS

blp = Blueprint("tools", __name__, url_prefix="/v1/tools", description="Tool definitions, drafts and versions.")
#: A page of tools as ToolListSchema dumps it, compiled (service/api/dumping.py): a quarter of the page's CPU else.
_DUMP_TOOL_LIST = compile_dump(ToolListSchema())

def _with_etag(view: dict, status: int = 200):
    headers = {"ETag": view["draft"]["etag"]} if view["draft"] else {}
    return view, status, headers


@blp.route("")
class ToolViews(MethodView):
    @blp.arguments(ToolQuerySchema, location="query")
    @blp.response(200, ToolListSchema)
    @requires(READ)
    def get(self, query):
        """One page of the organization's tools in name order; `next` is the `after` of the following page"""
        page = registry.tool_page(current_principal().organization, **query)
        body = _DUMP_TOOL_LIST({"tools": registry.tool_views(page.rows), "next": page.next})
        return json_response(body)

    @blp.doc(requestBody={"content": {"application/json": {"schema": RegistrationSchema}}})
    @blp.response(201, ToolSchema)
    @blp.alt_response(409, **route_refusal("`name-taken`: a tool with this name already exists."))
    @requires(WRITE_DRAFTS)
    def post(self):
        """Register a tool: creates the tool and its draft"""
        principal = current_principal()
        tool = registry.register_tool(principal.organization, json_body(), principal.actor)
        return _with_etag(registry.tool_view(tool), 201)


@blp.route("/import")
class ToolImportViews(MethodView):
    @blp.doc(requestBody={"content": {"application/json": {"schema": ImportSchema}}})
    @blp.response(200, ImportResultSchema)
    @blp.alt_response(422, **route_refusal("`invalid`: the document cannot be read or fetched, or a request field "
                                           "breaks its rule."))
    @requires(WRITE_DRAFTS)
    def post(self):
        """Import tools from an OpenAPI document: a preview, or with apply, their drafts"""
        principal = current_principal()
        dispatcher = current_app.extensions[DISPATCHER_KEY]
        return importing.run_import(principal.organization, json_body(), principal.actor, guard=dispatcher.guard,
                                    deadline=dispatcher.config.call_deadline_seconds, gone=client_left)


@blp.route("/<name>")
class ToolByNameViews(MethodView):
    @blp.response(200, ToolSchema)
    @requires(READ)
    def get(self, name):
        """Read one tool: its draft and published versions"""
        return _with_etag(registry.tool_view(registry.get_tool(current_principal().organization, name)))

    @blp.doc(requestBody={"content": {"application/json": {"schema": RelabelSchema}}})
    @blp.response(200, ToolSchema)
    @blp.alt_response(422, **route_refusal("`invalid`: a field other than `display_name` (`name-immutable`, "
                                           "`field-in-draft`, `field-unknown`), or a label past its rule."))
    @requires(WRITE_DRAFTS)
    def patch(self, name):
        """Relabel a tool (display name only; any time, published or not)"""
        principal = current_principal()
        return registry.tool_view(registry.relabel(principal.organization, name, json_body(), principal.actor))


@blp.route("/<name>/draft")
class ToolDraftViews(MethodView):
    @blp.doc(requestBody={"content": {"application/json": {"schema": RegistrationSchema}}},
             parameters=[{"in": "header", "name": "If-Match", "schema": {"type": "string"}, "required": False}])
    @blp.response(200, ToolSchema)
    @blp.alt_response(412, **route_refusal("`stale-draft`: `If-Match` names an older draft; reload it and save again."))
    @blp.alt_response(409, **route_refusal("`no-draft`: the tool has no draft to save."))
    @requires(WRITE_DRAFTS)
    def put(self, name):
        """Save the draft in place, validating everything together"""
        principal = current_principal()
        registry.save_draft(principal.organization, name, json_body(), principal.actor,
                            if_match=request.headers.get("If-Match"))
        return _with_etag(registry.tool_view(registry.get_tool(principal.organization, name)))

    @blp.response(201, ToolSchema)
    @blp.alt_response(409, **route_refusal("`draft-exists`, or `no-published-version` to start from."))
    @requires(WRITE_DRAFTS)
    def post(self, name):
        """Start a new draft as a copy of the latest published version"""
        principal = current_principal()
        registry.start_draft(principal.organization, name, principal.actor)
        return _with_etag(registry.tool_view(registry.get_tool(principal.organization, name)), 201)


@blp.route("/<name>/publish")
class ToolPublishViews(MethodView):
    @blp.response(201, PublishedSchema)
    @blp.alt_response(409, **route_refusal("`no-draft`: nothing to publish."))
    @blp.alt_response(422, **route_refusal("`invalid`: the draft breaks one or more rules."))
    @requires(PUBLISH)
    def post(self, name):
        """Publish the draft as the next immutable version (people only); every project draft that pinned the draft
        now pins that version (`repinned`)"""
        principal = current_principal()
        return registry.publish_tool(principal.organization, name, principal.actor).answer()


@blp.route("/<name>/versions/<version:number>")
class ToolVersionViews(MethodView):
    @blp.response(200, VersionSchema)
    @requires(READ)
    def get(self, name, number):
        """Read a published version (read-only)"""
        return registry.version_view(registry.get_version(current_principal().organization, name, number))

    @blp.alt_response(409, **route_refusal("`published-read-only`: a published version never changes."))
    @requires(READ)
    def put(self, name, number):
        """Refused: a published version never changes"""
        registry.get_version(current_principal().organization, name, number)  # 404 before 409
        raise registry.published_read_only()

    patch = put
    delete = put
