"""The Tools screen, registering, the editor, publishing, and published versions (read-only)."""
from __future__ import annotations

from typing import Any

from flask import redirect, request, url_for

from service import registry
from service.dashboard.forms import (
    BLANK_PARAMETER,
    PARAMETERS,
    apply_row_op,
    definition_from_form,
    editor_state,
    in_spec_voice,
    registration_from_form,
    with_placeholder_parameters,
)
from service.dashboard.history import tool_extras
from service.dashboard.readable import names, repinned_sentence
from service.dashboard.shaping import SAMPLE, TRY_SHAPE, at_inputs, try_shape
from service.dashboard.tool_list import COLUMNS, SHOWN_COLUMNS, ListQuery, listing
from service.dashboard.web import PUBLISH, READ, WRITE_DRAFTS, blp, done, page, powers, principal, requires
from service.definition import ELEMENT_TYPES, LOCATIONS, METHODS, SCOPES, SUBJECT, TYPES
from service.errors import ServiceError
from service.models import Tool
from service.ops import impact
from service.registry.lines import LineFilter

CHOICES = {"methods": METHODS, "scopes": SCOPES, "types": TYPES, "locations": LOCATIONS,
           "element_types": ELEMENT_TYPES}
#: The Tools screen's filter value for tools that belong to no project.
ORGANIZATION_WIDE = "-"


def _org():
    return principal().organization


def summary(tool: Tool) -> dict[str, Any]:
    """One line of the Tools screen: the draft's settings when there is one (what is being worked on),
    otherwise the latest published version's."""
    view = registry.tool_view(tool)
    latest = view["versions"][-1]["version"] if view["versions"] else None
    if view["draft"]:
        definition = view["draft"]["definition"]
    else:
        assert latest is not None  # a tool is created with its draft: without one, it has been published
        definition = registry.get_version(tool.organization, tool.name, latest).definition
    return {**view, "latest": latest, "definition": definition}


def in_project(name: str, search: str = "") -> LineFilter:
    """The tools a project has: its own, and those its draft version or its latest published version pins."""
    project = registry.get_project(_org(), name)
    view = registry.project_view(project)
    pins = (view["draft"]["pins"] if view["draft"] else []) + (view["versions"][-1]["pins"] if view["versions"] else [])
    return LineFilter(search=search, project=project, pinned=frozenset(p["tool"] for p in pins))


@blp.get("/tools")
@requires(READ)
def tools():
    """Every tool; or a project's (see `in_project`); or only the organization-wide ones: searched by name, display
    name and description, sorted by any column, a page at a time, all in the database."""
    chosen = request.args.get("project", "")
    query = ListQuery.from_args(request.args)
    if chosen == ORGANIZATION_WIDE:
        which = LineFilter(search=query.search, organization_wide=True)
    elif chosen:
        which = in_project(chosen, query.search)
    else:
        which = LineFilter(search=query.search)
    kept = {"project": chosen} if chosen else {}
    return page("tools.html", listed=listing(_org(), which, query), query=query, kept=kept, columns=COLUMNS,
                shown=SHOWN_COLUMNS,
                projects=registry.list_projects(_org()), chosen=chosen, organization_wide=ORGANIZATION_WIDE)


#: The register form's labels: its inputs and its summary of problems name each field the same way.
REGISTER_LABELS = {"name": "Tool name", "display_name": "Display name (optional)", "project": "Project",
                   "description": "Description", "method": "Method", "url": "URL", "scope": "Scope"}
REGISTER = "register"
ADDED_PLACEHOLDERS = "Added a path parameter for {names} from the URL; check {them} and register again."
ADDED_SUBJECT = " The {subject} placeholder makes the tool per-user: the platform fills it from the session token."


def _register_page(data: dict, status: int = 200, violations=(), message: str | None = None,
                   note: str | None = None):
    return page("register.html", status, violations=violations, state=data, projects=registry.list_projects(_org()),
                choices=CHOICES, labels=REGISTER_LABELS, message=message, note=note, blank=BLANK_PARAMETER)


@blp.get("/tools/new")
@requires(WRITE_DRAFTS)
def register():
    return _register_page({"method": "GET", "scope": "shared", PARAMETERS: []})


@blp.post("/tools/new")
@requires(WRITE_DRAFTS)
def register_submit():
    """Register a tool: creates it and its draft, then opens the editor on that draft. A URL with placeholders
    registers with their path parameters; a refusal for a placeholder without one adds it to the form."""
    data = registration_from_form(request.form)
    op = request.form.get("op", REGISTER)
    if op != REGISTER:
        return _register_page({**data, PARAMETERS: apply_row_op(data[PARAMETERS], op, BLANK_PARAMETER)})
    try:
        tool = registry.register_tool(_org(), data, principal().actor)
    except ServiceError as error:
        note = None
        if any(v.rule == "placeholder-needs-parameter" for v in error.violations):
            data, added = with_placeholder_parameters(data)
            if added:
                note = ADDED_PLACEHOLDERS.format(names=names([f"{{{a}}}" for a in added]),
                                                 them="it" if len(added) == 1 else "them")
                note += ADDED_SUBJECT if SUBJECT in added else ""
        return _register_page(data, error.status, in_spec_voice(error.violations), error.message, note)
    return done("Registered. This is its draft: fill in the definition and the parameters, then save.",
                "dashboard.editor", name=tool.name)


@blp.get("/tools/<name>")
@requires(READ)
def tool(name: str):
    """A tool opens on its draft, or, with none, on its latest published version."""
    view = registry.tool_view(registry.get_tool(_org(), name))
    if view["draft"]:
        return redirect(url_for("dashboard.editor", name=name))
    return redirect(url_for("dashboard.version", name=name, number=view["versions"][-1]["version"]))


def _editor(view: dict, state: dict, *, status: int = 200, violations=(), dirty: bool = False,
            etag: str | None = None, message: str | None = None, **shaping: Any):
    return page("editor.html", status, violations=at_inputs(violations, state), tool=view, state=state,
                choices=CHOICES, read_only=WRITE_DRAFTS not in powers(), etag=etag or view["draft"]["etag"],
                dirty=dirty, message=message, version=None, blank=BLANK_PARAMETER, **tool_extras(view), **shaping)


@blp.get("/tools/<name>/draft")
@requires(READ)
def editor(name: str):
    view = registry.tool_view(registry.get_tool(_org(), name))
    if not view["draft"]:
        return redirect(url_for("dashboard.tool", name=name))
    return _editor(view, editor_state(view["draft"]["definition"], view["display_name"]))


@blp.post("/tools/<name>/draft")
@requires(WRITE_DRAFTS)
def editor_submit(name: str):
    """Save the draft in place, validating everything together; or add, remove or move a parameter row
    for a page whose script could not."""
    view = registry.tool_view(registry.get_tool(_org(), name))
    if not view["draft"]:
        return redirect(url_for("dashboard.tool", name=name))
    state = definition_from_form(request.form, name)
    etag = request.form.get("etag") or None
    op = request.form.get("op", "save")
    if op == TRY_SHAPE:  # the sample is shaped, nothing is saved: the page comes back as it was sent
        return _editor(view, state, dirty=True, etag=etag, sample=request.form.get(SAMPLE, ""),
                       preview=try_shape(request.form))
    if op != "save":
        state[PARAMETERS] = apply_row_op(state[PARAMETERS], op, BLANK_PARAMETER)
        return _editor(view, state, dirty=True, etag=etag)
    try:
        registry.save_draft(_org(), name, state, principal().actor, if_match=etag)
    except ServiceError as error:
        # Unsaved work stays on the page, marked unsaved, with each violation next to its field.
        return _editor(view, state, status=error.status, violations=error.violations, dirty=True, etag=etag,
                       message=error.message)
    return done("Saved.", "dashboard.editor", name=name)


@blp.post("/tools/<name>/draft/new")
@requires(WRITE_DRAFTS)
def start_draft(name: str):
    draft = registry.start_draft(_org(), name, principal().actor)
    return done(f"Started a new draft from version {draft.based_on}.", "dashboard.editor", name=name)


@blp.get("/tools/<name>/versions/<version:number>")
@requires(READ)
def version(name: str, number: int):
    """A published version, read-only: every field fixed; "start a new draft" to change anything."""
    row = registry.get_version(_org(), name, number)
    view = registry.tool_view(row.tool)
    return page("editor.html", tool=view, state=editor_state(row.definition, view["display_name"]),
                choices=CHOICES, read_only=True, version=registry.version_view(row), etag=None, dirty=False,
                message=None, blank=BLANK_PARAMETER, **tool_extras(view, number))


@blp.post("/tools/<name>/label")
@requires(WRITE_DRAFTS)
def relabel(name: str):
    """Change the display name: any time, published or not, and not versioned."""
    registry.relabel(_org(), name, {"display_name": request.form.get("display_name", "").strip() or None},
                     principal().actor)
    return done("Display name changed.", "dashboard.tool", name=name)


def _pinned_by(name: str) -> list[str]:
    """Projects whose draft or published versions pin this tool: publishing freezes it for each of them."""
    found = []
    for project in registry.list_projects(_org()):
        view = registry.project_view(project)
        pins = [p for v in view["versions"] for p in v["pins"]] + (view["draft"]["pins"] if view["draft"] else [])
        if any(p["tool"] == name for p in pins):
            found.append(project.name)
    return found


def _confirm_publish(name: str, status: int = 200, violations=(), message: str | None = None):
    view = registry.tool_view(registry.get_tool(_org(), name))
    if not view["draft"]:
        return redirect(url_for("dashboard.tool", name=name))
    number = (view["versions"][-1]["version"] if view["versions"] else 0) + 1
    return page("publish.html", status, violations=violations, tool=view, number=number,
                projects=_pinned_by(name), moving=registry.will_move(_org(), [name])[name], names=names,
                impact=impact.draft_impact(_org(), name), message=message)


@blp.get("/tools/<name>/publish")
@requires(PUBLISH)
def publish(name: str):
    """Confirm a publish, saying what freezes and which changes against the latest version break the model or
    the endpoint."""
    return _confirm_publish(name)


@blp.post("/tools/<name>/publish")
@requires(PUBLISH)
def publish_submit(name: str):
    try:
        published = registry.publish_tool(_org(), name, principal().actor)
    except ServiceError as error:
        return _confirm_publish(name, status=error.status, violations=error.violations, message=error.message)
    moved = repinned_sentence([r.to_dict() for r in published.repinned])
    return done(f"Published version {published.number}. It can never change; start a new draft to go on. {moved}"
                .strip(), "dashboard.version", name=name, number=published.number)
