"""Projects: one draft version of pins, published versions that pin only published tool versions.

Publishing a project version publishes every tool draft it pins first, then freezes itself, all in one transaction:
if anything is wrong, nothing is published and the answer lists every problem.
"""
from __future__ import annotations

import re
from typing import Any

from peewee import fn

from service import limits
from service.catalogue import Violation, violation
from service.database import retry_transient, write_transaction
from service.errors import PINS, REQUEST, concurrent_change, conflict, invalid, not_found, refusal
from service.models import Organization, Pin, Project, ProjectDraft, ProjectVersion, Tool, ToolVersion, now
from service.records import audit
from service.registry.freezing import DRAFT, Publication, audit_moves, lock_pinned_drafts, move_pins
from service.registry.rules import check_definition
from service.registry.tools import audit_publish, draft_of, publish_draft_in_transaction, unique_or
from service.text import is_text, text_problem

PROJECT_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")  # fullmatch: "$" would let a final "\n" in


def get_project(organization: Organization, name: str) -> Project:
    """The organization's project of that name, or 404."""
    if not is_text(name):  # a control character names nothing, and PostgreSQL cannot even be asked
        raise not_found("project")
    project = Project.get_or_none(Project.organization == organization, Project.name == name)
    if project is None:
        raise not_found("project")
    return project


def list_projects(organization: Organization) -> list[Project]:
    return list(Project.select().where(Project.organization == organization).order_by(Project.name))


def create_project(organization: Organization, name: Any, actor: str) -> Project:
    """A project with an empty draft version."""
    if not isinstance(name, str) or not PROJECT_NAME.fullmatch(name):
        raise invalid([violation("name", "project-name-format")], REQUEST)
    taken = violation("name", "project-name-taken")
    with unique_or(taken), write_transaction():
        if Project.select().where(Project.organization == organization, Project.name == name).exists():
            raise conflict(taken)
        project = Project.create(organization=organization, name=name, created_at=now())
        ProjectDraft.create(project=project, pins=[], revision=1, updated_at=now(), updated_by=actor)
        audit.record(organization, actor, audit.PROJECT_CREATE, audit.PROJECT, name, after=[])
    return project


def project_draft(project: Project) -> ProjectDraft | None:
    return ProjectDraft.get_or_none(ProjectDraft.project == project)


def start_project_draft(organization: Organization, name: str, actor: str) -> ProjectDraft:
    """A new draft version copying the latest published version's pins."""
    project = get_project(organization, name)
    with unique_or(violation("", "project-draft-exists")), write_transaction():
        if project_draft(project) is not None:
            raise refusal("project-draft-exists")
        latest = project.versions.order_by(ProjectVersion.number.desc()).first()
        pins = [] if latest is None else [
            {"tool": pin.tool.name, "version": pin.tool_version.number} for pin in latest.pins.order_by(Pin.id)]
        draft = ProjectDraft.create(project=project, pins=pins, revision=1, updated_at=now(), updated_by=actor)
        audit.record(organization, actor, audit.PROJECT_START_DRAFT, audit.PROJECT, project.name,
                     version=latest.number if latest else None, after=pins)
        return draft


def check_pins(project: Project, pins: Any, *, publishing: bool = False) -> list[Violation]:
    """Every problem with a list of pins: unknown tools or versions, another project's tool, duplicates."""
    if not isinstance(pins, list):
        return [violation("pins", "field-type")]
    if len(pins) > limits.MAX_PINS:  # refused before any pin is looked up
        return [violation("pins", "too-many-pins")]
    found: list[Violation] = []
    seen: set[str] = set()
    for i, pin in enumerate(pins):
        field = f"pins[{i}]"
        if not isinstance(pin, dict) or not isinstance(pin.get("tool"), str):
            found.append(violation(f"{field}.tool", "field-required"))
            continue
        unknown = set(pin) - {"tool", "version"}
        found.extend(violation(f"{field}.{k}", "field-unknown") for k in sorted(unknown))
        if (problem := text_problem(pin["tool"])) is not None:
            found.append(violation(f"{field}.tool", problem))
            continue
        tool = Tool.get_or_none(Tool.organization == project.organization_id, Tool.name == pin["tool"])
        if tool is None:
            found.append(violation(f"{field}.tool", "pin-unknown-tool"))
            continue
        if tool.name in seen:
            found.append(violation(f"{field}.tool", "pin-duplicate"))
        seen.add(tool.name)
        if tool.project_id is not None and tool.project_id != project.id:
            found.append(violation(f"{field}.tool", "pin-other-project"))
        version = pin.get("version")
        if version == DRAFT:
            draft = draft_of(tool)
            if draft is None:
                found.append(violation(f"{field}.version", "pin-no-draft"))
            elif publishing:
                _, problems = check_definition(draft.definition, registered=True)
                found.extend(Violation(f"{field}.{v.field}", v.rule, v.message) for v in problems)
        elif isinstance(version, int) and not isinstance(version, bool):
            # A number past what the database stores is no version, and is never sent to it.
            if (not 0 < version <= limits.MAX_STORED_INTEGER or not ToolVersion.select().where(
                    ToolVersion.tool == tool, ToolVersion.number == version).exists()):
                found.append(violation(f"{field}.version", "pin-unknown-version"))
        else:
            found.append(violation(f"{field}.version", "pin-version-format"))
    return found


def _pinned_at_draft(organization: Organization, pins: Any) -> list[Tool]:
    names = {pin["tool"] for pin in pins if isinstance(pin, dict) and isinstance(pin.get("tool"), str)
             and pin.get("version") == DRAFT} if isinstance(pins, list) else set()
    return list(Tool.select().where(Tool.organization == organization, Tool.name.in_(names))) if names else []


def save_project_draft(organization: Organization, name: str, pins: Any, actor: str) -> ProjectDraft:
    """Replace the draft version's pins, refusing every bad pin at once."""
    project = get_project(organization, name)
    with write_transaction():
        # Checked inside the transaction, with the pinned drafts held: a draft published meanwhile is never pinned.
        lock_pinned_drafts(_pinned_at_draft(organization, pins))
        found = check_pins(project, pins)
        if found:
            raise invalid(found, PINS)
        draft = project_draft(project)
        if draft is None:
            raise refusal("project-no-draft")
        ProjectDraft.update(pins=pins, revision=ProjectDraft.revision + 1, updated_at=now(),
                            updated_by=actor).where(ProjectDraft.id == draft.id).execute()
        audit.record(organization, actor, audit.PROJECT_PIN, audit.PROJECT, project.name, before=draft.pins,
                     after=pins)
        # Read back inside the transaction: the row just written, which a publish right after could replace.
        saved = project_draft(project)
    assert saved is not None  # written above, in the same transaction
    return saved


@retry_transient
def publish_project(organization: Organization, name: str, actor: str) -> Publication:
    """Publish every pinned tool draft, move every other project draft that pinned one of them to the version it
    became, then freeze the project version; all or nothing.

    The pinned drafts are published in one canonical order (by tool name), whatever order the pins are in, so two
    projects pinning the same drafts in opposite orders queue behind each other instead of deadlocking; of such
    racers one wins and the others get 409. Other projects' drafts are moved after every tool draft is consumed
    (see `freezing` for the lock order).
    """
    project = get_project(organization, name)
    # A publish that a concurrent one beat to a pinned draft or to the version number: 409, nothing published.
    with unique_or(concurrent_change()), write_transaction():
        draft = project_draft(project)
        # The pinned drafts are held first, as every publish takes them; a publish that froze them while this one
        # waited has moved this draft's pins to the versions they became, so the pins are read again after the wait
        # (read before it, a draft already consumed would be refused as a bad pin instead of published or 409).
        if draft is not None and lock_pinned_drafts(_pinned_at_draft(organization, draft.pins), publishing=True):
            draft = project_draft(project)
        if draft is None:
            raise refusal("project-no-draft")
        found = check_pins(project, draft.pins, publishing=True)
        if found:
            raise invalid(found, PINS)
        versions: dict[str, tuple[Tool, ToolVersion]] = {}
        published: list[tuple[Tool, ToolVersion]] = []
        for pin in sorted(draft.pins, key=lambda p: p["tool"]):
            tool = Tool.get(Tool.organization == organization, Tool.name == pin["tool"])
            if pin["version"] == DRAFT:
                version = publish_draft_in_transaction(tool, actor)
                published.append((tool, version))
            else:
                version = ToolVersion.get(ToolVersion.tool == tool, ToolVersion.number == pin["version"])
            versions[tool.name] = (tool, version)
        pinned = [versions[pin["tool"]] for pin in draft.pins]
        number = (ProjectVersion.select(fn.MAX(ProjectVersion.number))
                  .where(ProjectVersion.project == project).scalar() or 0) + 1
        project_version = ProjectVersion.create(project=project, number=number, published_at=now(),
                                                published_by=actor)
        for tool, version in pinned:
            Pin.create(project_version=project_version, tool_version=version, tool=tool)
        repinned, moved = move_pins(organization, {t.name: v.number for t, v in published}, actor,
                                    except_project=project.id)
        if ProjectDraft.delete().where(ProjectDraft.id == draft.id,
                                       ProjectDraft.revision == draft.revision).execute() != 1:
            raise refusal("project-no-draft")
        # Recorded last, so the audit chain's lock is the last one this transaction takes.
        for tool, version in published:
            audit_publish(organization, tool, version, actor)
        audit_moves(organization, moved, actor)
        audit.record(organization, actor, audit.PROJECT_PUBLISH, audit.PROJECT, project.name, version=number,
                     before=draft.pins, after=[{"tool": t.name, "version": v.number} for t, v in pinned])
    return Publication(number, tuple((t.name, v.number) for t, v in published), tuple(repinned))


def project_view(project: Project) -> dict[str, Any]:
    """A project as the API shows it: its draft pins and its published versions with their pins."""
    draft = project_draft(project)
    return {
        "name": project.name,
        "draft": None if draft is None else {"pins": draft.pins, "revision": draft.revision,
                                             "updated_at": draft.updated_at, "updated_by": draft.updated_by},
        "versions": [
            {"version": v.number, "published_at": v.published_at, "published_by": v.published_by,
             "pins": [{"tool": p.tool.name, "version": p.tool_version.number} for p in v.pins.order_by(Pin.id)]}
            for v in project.versions.order_by(ProjectVersion.number)
        ],
    }
