"""/v1/projects: projects, their draft pins and published versions."""
from __future__ import annotations

from flask.views import MethodView
from flask_smorest import Blueprint

from service import registry
from service.api.auth import current_principal, requires
from service.api.body import json_body
from service.api.document import route_refusal
from service.api.projects.schemas import (
    NewProjectSchema,
    ProjectListSchema,
    ProjectQuerySchema,
    ProjectSchema,
    SavePinsSchema,
)
from service.api.schemas import ProjectPublishedSchema
from service.roles import PUBLISH, READ, WRITE_DRAFTS

blp = Blueprint("projects", __name__, url_prefix="/v1/projects", description="Projects, pins and versions.")

@blp.route("")
class ProjectViews(MethodView):
    @blp.arguments(ProjectQuerySchema, location="query")
    @blp.response(200, ProjectListSchema)
    @requires(READ)
    def get(self, query):
        """One page of the organization's projects in name order; `next` is the `after` of the following page"""
        page = registry.project_page(current_principal().organization, **query)
        return {"projects": registry.project_views(page.rows), "next": page.next}

    @blp.doc(requestBody={"content": {"application/json": {"schema": NewProjectSchema}}})
    @blp.response(201, ProjectSchema)
    @blp.alt_response(409, **route_refusal("`project-name-taken`: a project with this name already exists."))
    @requires(WRITE_DRAFTS)
    def post(self):
        """Create a project with an empty draft version"""
        principal = current_principal()
        body = json_body()
        name = body.get("name") if isinstance(body, dict) else None
        return registry.project_view(registry.create_project(principal.organization, name, principal.actor))


@blp.route("/<name>")
class ProjectByNameViews(MethodView):
    @blp.response(200, ProjectSchema)
    @requires(READ)
    def get(self, name):
        """Read a project: its draft pins and published versions"""
        return registry.project_view(registry.get_project(current_principal().organization, name))


@blp.route("/<name>/draft")
class ProjectDraftViews(MethodView):
    @blp.response(201, ProjectSchema)
    @blp.alt_response(409, **route_refusal("`project-draft-exists`: the project already has a draft version."))
    @requires(WRITE_DRAFTS)
    def post(self, name):
        """Start the project's draft version from its latest published pins"""
        principal = current_principal()
        registry.start_project_draft(principal.organization, name, principal.actor)
        return registry.project_view(registry.get_project(principal.organization, name))

    @blp.doc(requestBody={"content": {"application/json": {"schema": SavePinsSchema}}})
    @blp.response(200, ProjectSchema)
    @blp.alt_response(409, **route_refusal("`project-no-draft`: the project has no draft version to save."))
    @requires(WRITE_DRAFTS)
    def put(self, name):
        """Save the draft version's pins"""
        principal = current_principal()
        body = json_body()
        pins = body.get("pins") if isinstance(body, dict) else None
        registry.save_project_draft(principal.organization, name, pins, principal.actor)
        return registry.project_view(registry.get_project(principal.organization, name))


@blp.route("/<name>/publish")
class ProjectPublishViews(MethodView):
    @blp.response(201, ProjectPublishedSchema)
    @blp.alt_response(422, **route_refusal("`invalid`: every bad pin and every rule a pinned draft breaks, at once."))
    @blp.alt_response(409, **route_refusal("`project-no-draft`, or `conflict`: a concurrent publish won."))
    @requires(PUBLISH)
    def post(self, name):
        """Publish every pinned tool draft (`published`), move other projects' drafts that pinned one of them to the
        version it became (`repinned`), then freeze the project version, in one transaction"""
        principal = current_principal()
        return registry.publish_project(principal.organization, name, principal.actor).answer(tools=True)
