"""Projects: create one, pin tools into its draft version, publish it (and the tool drafts it pins)."""
from __future__ import annotations

from typing import Any

from flask import redirect, request, url_for

from service import registry
from service.catalogue import Violation
from service.dashboard.forms import PIN_PREFIX, pin_violations, pins_from_form
from service.dashboard.readable import names, repinned_sentence
from service.dashboard.tools import summary
from service.dashboard.web import PUBLISH, READ, WRITE_DRAFTS, blp, done, page, principal, requires
from service.errors import ServiceError
from service.limits import MAX_SEARCH_CHARS, PIN_SEARCH_PAGE_SIZE
from service.ops import impact
from service.text import text_problem

DRAFT = "draft"
#: Matches a pins page's search lists at once (a module name of its own, so a test can shorten the page).
PIN_SEARCH_PAGE = PIN_SEARCH_PAGE_SIZE


def _org():
    return principal().organization


@blp.get("/projects")
@requires(READ)
def projects():
    views = [registry.project_view(p) for p in registry.list_projects(_org())]
    return page("projects.html", projects=views, name="")


@blp.post("/projects")
@requires(WRITE_DRAFTS)
def create_project():
    name = request.form.get("name", "").strip()
    try:
        registry.create_project(_org(), name, principal().actor)
    except ServiceError as error:
        views = [registry.project_view(p) for p in registry.list_projects(_org())]
        return page("projects.html", error.status, projects=views, name=name,
                    violations=error.violations or [Violation("name", error.code, error.message)])
    return done(f"Created project {name}. Pin tools into its draft version below.", "dashboard.project", name=name)


def pin_rows(project, pins: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per pin, in pin order: the tool, the versions it can be pinned at and what it is pinned at now. Only
    the pinned tools are read (`registry.tools_named`), never the organization's every tool; a pin naming no tool
    this project may pin (a refused form) keeps its row, for its error to stand beside."""
    tools = {t.name: t for t in registry.tools_named(_org(), [str(p.get("tool")) for p in pins])}
    rows = []
    for pin in pins:
        name = str(pin.get("tool"))
        tool = tools.get(name)
        if tool is not None and tool.project_id not in (None, project.id):
            tool = None
        row = summary(tool) if tool is not None else {"name": name, "display_name": name, "project": None,
                                                      "draft": None, "versions": [], "latest": None,
                                                      "definition": {}, "unknown": True}
        rows.append({**row, "field": PIN_PREFIX + name, "pinned": pin.get("version", ""),
                     "choices": ([DRAFT] if row["draft"] else []) + [v["version"] for v in reversed(row["versions"])]})
    return rows


def pin_search(project, args) -> dict[str, Any] | None:
    """The tools matching the page's search (`?q=`, in the name or display name) that this project may pin, a page
    at a time (`after`), searched in the database by the registry's paged listing; None before any search."""
    if "q" not in args:
        return None
    q, after = args.get("q", "").strip(), args.get("after") or None
    try:
        found = registry.tool_page(_org(), limit=PIN_SEARCH_PAGE, after=after, q=q or None, pinnable_in=project)
    except ServiceError as error:
        return {"q": q, "tools": [], "next": None, "violations": [
            Violation("q" if v.field == "q" else v.field, v.rule, v.message) for v in error.violations]}
    views = registry.tool_views(found.rows)
    return {"q": q, "next": found.next, "violations": [], "tools": [
        {**view, "latest": view["versions"][-1]["version"] if view["versions"] else None} for view in views]}


def _project_page(name: str, *, pins: list | None = None, status: int = 200, violations=(), dirty=False):
    project = registry.get_project(_org(), name)
    view = registry.project_view(project)
    if pins is None:
        pins = view["draft"]["pins"] if view["draft"] else []
    search = pin_search(project, request.args if request.method == "GET" else request.form)
    violations = [*violations, *(search["violations"] if search else [])]
    return page("project.html", 422 if search and search["violations"] else status, violations=violations,
                project=view, rows=pin_rows(project, pins), dirty=dirty, search=search,
                pinned={p["tool"] for p in pins})


@blp.get("/projects/<name>")
@requires(READ)
def project(name: str):
    return _project_page(name)


def _added_pin(name: str) -> dict[str, Any]:
    """The pin an *Add* button makes: the tool's latest published version, or its draft when it has none (its
    version can be chosen beside it afterwards, as for every pin)."""
    try:
        view = registry.tool_view(registry.get_tool(_org(), name))
    except ServiceError:
        return {"tool": name, "version": DRAFT}  # the registry refuses it with its sentence, beside its row
    return {"tool": name, "version": view["versions"][-1]["version"] if view["versions"] else DRAFT}


def _keepable(search: str | None) -> bool:
    """Whether a search may ride on the redirect after a save: one the listing takes (a bound length, plain text),
    never an arbitrary field that would make the Location header itself too long to read."""
    return search is not None and len(search) <= MAX_SEARCH_CHARS and text_problem(search) is None


@blp.post("/projects/<name>/draft")
@requires(WRITE_DRAFTS)
def save_pins(name: str):
    """Save the pins as chosen; *Add* (a search result's button) saves them with that tool pinned as well."""
    pins = pins_from_form(request.form)
    added = request.form.get("add", "").strip()
    if added and added not in {p["tool"] for p in pins}:
        pins.append(_added_pin(added))
    try:
        registry.save_project_draft(_org(), name, pins, principal().actor)
    except ServiceError as error:
        return _project_page(name, pins=pins, status=error.status, dirty=True,
                             violations=pin_violations(pins, error.violations))
    kept = {"q": request.form["q"]} if _keepable(request.form.get("q")) else {}
    if added:
        version = next(p["version"] for p in pins if p["tool"] == added)
        at = "its draft" if version == DRAFT else f"version {version}"
        return done(f"Pinned {added} at {at}; choose another version beside it if needed.", "dashboard.project",
                    name=name, **kept)
    return done("Saved the draft version's pins.", "dashboard.project", name=name, **kept)


@blp.post("/projects/<name>/draft/new")
@requires(WRITE_DRAFTS)
def start_project_draft(name: str):
    registry.start_project_draft(_org(), name, principal().actor)
    return done("Started a new draft version from the latest published pins.", "dashboard.project", name=name)


def _confirm(name: str, status: int = 200, violations=(), message: str | None = None):
    """What publishing will do: publish each pinned tool draft first (as its next version), then freeze; and for
    each tool version it freezes, what changes and what breaks against what the project pinned before."""
    project_row = registry.get_project(_org(), name)
    view = registry.project_view(project_row)
    if not view["draft"]:
        return redirect(url_for("dashboard.project", name=name))
    rows = {r["name"]: r for r in pin_rows(project_row, view["draft"]["pins"]) if not r.get("unknown")}
    pinned_drafts = [p["tool"] for p in view["draft"]["pins"] if p["version"] == DRAFT and p["tool"] in rows]
    moving = registry.will_move(_org(), pinned_drafts, except_project=project_row.id)
    drafts, fixed = [], []
    for pin in view["draft"]["pins"]:
        row = rows.get(pin["tool"])
        if pin["version"] == DRAFT and row is not None:
            drafts.append({**row, "next": (row["latest"] or 0) + 1, "moving": moving[pin["tool"]]})
        else:
            fixed.append(pin)
    number = (view["versions"][-1]["version"] if view["versions"] else 0) + 1
    violations = pin_violations(view["draft"]["pins"], violations)
    freeze = impact.project_impact(_org(), name)
    return page("project_publish.html", status, violations=violations, project=view, drafts=drafts,
                fixed=fixed, number=number, message=message, names=names, freeze=freeze,
                of={p["tool"]: p for p in freeze["pins"]})


@blp.get("/projects/<name>/publish")
@requires(PUBLISH)
def publish_project(name: str):
    return _confirm(name)


@blp.post("/projects/<name>/publish")
@requires(PUBLISH)
def publish_project_submit(name: str):
    try:
        published = registry.publish_project(_org(), name, principal().actor)
    except ServiceError as error:
        return _confirm(name, status=error.status, violations=error.violations, message=error.message)
    moved = repinned_sentence([r.to_dict() for r in published.repinned])
    return done(f"Published project version {published.number}. {moved}".strip(), "dashboard.project", name=name)
