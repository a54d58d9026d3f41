"""Publishing a tool freezes it for every project that pins it.

The spec: "publishing it, whether on its own or as part of publishing a project version, freezes it for every project
that pins it". A project draft that pins a tool's draft would otherwise pin a draft that no longer exists: its test
conversations would lose the tool and it could not be published until someone pinned again by hand. So in the
publishing transaction, every project draft that pinned the published draft is moved to the version it became, and
each move is recorded in the audit trail and told in the answer.

Locks, in the order every publish takes them: the tool drafts (consumed by the publish; a project's publish holds
all it pins first, then reads its pins again), then the project drafts (by id), then the audit chain. Saving a
project's pins takes the tool drafts it pins the same way first (`lock_pinned_drafts`), so a save that pins a draft
being published either lands first and is moved, or waits and is refused because the draft is gone: it can never pin
a draft that was already frozen.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from service.database import is_postgres
from service.models import Organization, Project, ProjectDraft, Tool, ToolDraft, now
from service.records import audit

DRAFT = "draft"


@dataclass(frozen=True)
class Repin:
    """One project draft's pin of a tool's draft, moved to the version that draft became."""

    project: str
    tool: str
    version: int

    def to_dict(self) -> dict[str, Any]:
        return {"project": self.project, "tool": self.tool, "version": self.version}


@dataclass(frozen=True)
class Publication:
    """What a publish did: the new version's number, the tool drafts it published (tool name, version) and the
    project drafts' pins it moved to those versions."""

    number: int
    published: tuple[tuple[str, int], ...] = ()
    repinned: tuple[Repin, ...] = ()

    def answer(self, *, tools: bool = False) -> dict[str, Any]:
        """The API's answer: `{"version", "repinned"}`, and `published` for a project (`tools`)."""
        answer: dict[str, Any] = {"version": self.number}
        if tools:
            answer["published"] = [{"tool": tool, "version": number} for tool, number in self.published]
        answer["repinned"] = [repin.to_dict() for repin in self.repinned]
        return answer


@dataclass(frozen=True)
class MovedDraft:
    """A project draft whose pins a publish moved: its pins before and after, for the audit trail."""

    project: str
    before: list[dict[str, Any]]
    after: list[dict[str, Any]]


def drafts_pinning(organization: Organization, tools: list[str], *, except_project: int | None = None
                   ) -> list[tuple[ProjectDraft, str]]:
    """Every (project draft, project name) of the organization that pins any of `tools` at "draft", by draft id."""
    wanted = set(tools)
    query = (ProjectDraft.select(ProjectDraft, Project.name).join(Project)
             .where(Project.organization == organization).order_by(ProjectDraft.id))
    if except_project is not None:
        query = query.where(Project.id != except_project)
    return [(draft, draft.project.name) for draft in query
            if any(pin.get("tool") in wanted and pin.get("version") == DRAFT for pin in draft.pins)]


def will_move(organization: Organization, tools: list[str], *, except_project: int | None = None
              ) -> dict[str, list[str]]:
    """What publishing these tools' drafts would move, for a confirmation: each tool's pinning project drafts."""
    moved: dict[str, list[str]] = {name: [] for name in tools}
    for draft, project in drafts_pinning(organization, tools, except_project=except_project):
        for pin in draft.pins:
            if pin.get("version") == DRAFT and pin.get("tool") in moved:
                moved[pin["tool"]].append(project)
    return moved


def move_pins(organization: Organization, published: dict[str, int], actor: str, *,
              except_project: int | None = None) -> tuple[list[Repin], list[MovedDraft]]:
    """Inside the publishing transaction, after the drafts in `published` (tool name → its new version number) were
    consumed: every other project draft pinning one of them at "draft" now pins that version instead."""
    repins: list[Repin] = []
    moved: list[MovedDraft] = []
    for draft, project in drafts_pinning(organization, list(published), except_project=except_project):
        if is_postgres():  # read again under a row lock: a save that committed meanwhile is moved, not lost
            locked = ProjectDraft.select().where(ProjectDraft.id == draft.id).for_update().get_or_none()
            if locked is None:
                continue
            draft = locked
        after = [{**pin, "version": published[pin["tool"]]}
                 if pin.get("version") == DRAFT and pin.get("tool") in published else pin for pin in draft.pins]
        if after == draft.pins:
            continue
        ProjectDraft.update(pins=after, revision=ProjectDraft.revision + 1, updated_at=now(),
                            updated_by=actor).where(ProjectDraft.id == draft.id).execute()
        moved.append(MovedDraft(project, draft.pins, after))
        repins += [Repin(project, pin["tool"], pin["version"]) for old, pin in zip(draft.pins, after) if old != pin]
    return sorted(repins, key=lambda r: (r.project, r.tool)), moved


def audit_moves(organization: Organization, moved: list[MovedDraft], actor: str) -> None:
    """Record each moved project draft: who published, and its pins before and after."""
    for draft in moved:
        audit.record(organization, actor, audit.PROJECT_REPIN, audit.PROJECT, draft.project, before=draft.before,
                     after=draft.after)


def lock_pinned_drafts(tools: list[Tool], *, publishing: bool = False) -> bool:
    """Hold the drafts of these tools until the caller's transaction ends (PostgreSQL; SQLite writers queue whole),
    so none of them can be published between being checked and being pinned; `publishing` holds them for writing.

    Always in the drafts' id order, whoever takes them, so a save and a publish, or two publishes, queue behind each
    other instead of deadlocking. True when anything was held (the caller may have waited: read again what it read).
    """
    if not (is_postgres() and tools):
        return False
    mode = "FOR UPDATE" if publishing else "FOR SHARE"
    list(ToolDraft.select(ToolDraft.id).where(ToolDraft.tool.in_(tools)).order_by(ToolDraft.id)
         .for_update(mode))  # type: ignore[arg-type]  # peewee takes the clause as text; its stubs say bool
    return True
