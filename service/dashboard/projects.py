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
from service.ops import impact

DRAFT = "draft"


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
    """One row per tool this project may pin (organization-wide tools and its own), pinned ones first in
    pin order: each with the versions it can be pinned at and what it is pinned at now."""
    pinned = {p["tool"]: p["version"] for p in pins}
    candidates = [summary(t) for t in registry.list_tools(_org())
                  if t.project_id is None or t.project_id == project.id]
    order = {name: i for i, name in enumerate(pinned)}
    candidates.sort(key=lambda t: (order.get(t["name"], len(order)), t["name"]))
    return [{**t, "field": PIN_PREFIX + t["name"], "pinned": pinned.get(t["name"], ""),
             "choices": ([DRAFT] if t["draft"] else []) + [v["version"] for v in reversed(t["versions"])]}
            for t in candidates]


def _project_page(name: str, *, pins: list | None = None, status: int = 200, violations=(), dirty=False):
    project = registry.get_project(_org(), name)
    view = registry.project_view(project)
    if pins is None:
        pins = view["draft"]["pins"] if view["draft"] else []
    return page("project.html", status, violations=violations, project=view, rows=pin_rows(project, pins),
                dirty=dirty)


@blp.get("/projects/<name>")
@requires(READ)
def project(name: str):
    return _project_page(name)


@blp.post("/projects/<name>/draft")
@requires(WRITE_DRAFTS)
def save_pins(name: str):
    pins = pins_from_form(request.form)
    try:
        registry.save_project_draft(_org(), name, pins, principal().actor)
    except ServiceError as error:
        return _project_page(name, pins=pins, status=error.status, dirty=True,
                             violations=pin_violations(pins, error.violations))
    return done("Saved the draft version's pins.", "dashboard.project", name=name)


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
    rows = {r["name"]: r for r in pin_rows(project_row, view["draft"]["pins"])}
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
