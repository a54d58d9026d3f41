"""An import, whole: read the document, map every operation, say what each would become, and write the chosen ones.

A preview (the default) writes nothing. Applying writes every ready operation's draft in one transaction with one
audit record, through the registry's own creation functions; it never publishes. Each operation ends `ready` (a
preview), `created`, `refused` (a rule it breaks or a required part that cannot be carried, each with its sentence)
or `skipped` (not chosen, or a method a tool cannot have).
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any, Callable

import gevent

from service import limits
from service.catalogue import RULES, Violation, violation
from service.database import released, retry_transient, write_transaction
from service.dispatch import AddressGuard
from service.errors import ServiceError, client_gone, concurrent_change, invalid
from service.importing.bounds import Budget, refused
from service.importing.document import read_document
from service.importing.fetch import fetch_document
from service.importing.kept import keep_existing
from service.importing.operations import METHODS, Context, Mapped, Operation, map_operation
from service.importing.options import ImportOptions, chosen_server, first_server, server_url
from service.importing.refs import RefError, Resolver
from service.models import Organization, Project, Tool, ToolDraft
from service.records import audit
from service.registry.tools import (
    create_tool_in_transaction,
    latest_version,
    start_draft_in_transaction,
    unique_or,
)

READY, CREATED, REFUSED, SKIPPED = "ready", "created", "refused", "skipped"
#: What applying does for a ready operation: register a new tool, or start a new draft of an existing one.
REGISTER, NEW_DRAFT = "register", "new-draft"
UNKNOWN = "operation-unknown"
#: How often a request waiting for its document to be read looks whether its client is still there.
WATCH_SECONDS = 0.1


@dataclass
class Planned:
    """One operation of the document and what the import does with it."""

    key: str
    operation_id: str | None
    mapped: Mapped
    status: str = READY
    action: str | None = None
    errors: list[Violation] = field(default_factory=list)
    #: What a new draft of an existing tool keeps of its latest version (service.importing.kept).
    kept: list[Violation] = field(default_factory=list)

    def refuse(self, *violations: Violation) -> None:
        self.status, self.action = REFUSED, None
        self.errors.extend(violations)

    def approval(self) -> dict[str, Any] | None:
        """Whether each call of the tool would wait for the person's approval, and why; None when nothing is mapped."""
        if self.mapped.registration is None or self.mapped.approval is None:
            return None
        kept = next((v for v in self.kept if v.field == "requires_approval"), None)
        why = kept or self.mapped.approval
        return {"required": self.mapped.requires_approval, "rule": why.rule, "why": why.message}

    def partial(self) -> list[Violation]:
        """What a ready or created tool loses that a person should see before applying: the operation's whole request
        body, with the reason it is not carried (as `not_carried` lists it too); empty when nothing of the kind is
        lost."""
        if self.status not in (READY, CREATED):
            return []
        return [v for v in self.mapped.not_carried if v.field == "body"]

    def view(self) -> dict[str, Any]:
        """As the API answers it."""
        return {
            "operation": self.key, "operation_id": self.operation_id, "tool": self.mapped.tool or None,
            "status": self.status, "action": self.action, "errors": [v.to_dict() for v in self.errors],
            "not_carried": [v.to_dict() for v in self.mapped.not_carried], "kept": [v.to_dict() for v in self.kept],
            "partial": [v.to_dict() for v in self.partial()], "approval": self.approval(),
            "definition": self.mapped.registration,
        }


def run_import(organization: Organization, data: Any, actor: str, *, guard: AddressGuard,
               deadline: float = limits.CALL_DEADLINE_SECONDS,
               gone: Callable[[], bool] | None = None) -> dict[str, Any]:
    """Preview, or with `apply`, import the operations of an OpenAPI document as drafts (CONTRACT "Import").

    The request's database connection is handed back while the document is fetched (under the call deadline) and
    read, and taken again to check names and write. `gone` tells whether the request's client has left: reading
    stops then (499 `client-gone`, which nobody reads but the log), as it does past its own bounds (422
    `document-too-complex`).
    """
    options = ImportOptions.parse(data)
    with released():
        text = options.document
        if options.url is not None:
            text = fetch_document(options.url, guard=guard, deadline=deadline)
        assert text is not None  # ImportOptions.parse: a document or its URL, exactly one
        document, context, planned = _off_the_hub(Budget(), gone, text, options)
    project = _project(organization, options.project)
    _check_names(organization, planned, options.update_existing, project)
    if options.apply:
        ready = [p for p in planned if p.status == READY]
        if ready:
            outcomes = write_drafts(organization, ready, project, actor, _title(document), text)
            for p in ready:
                outcome = outcomes[p.mapped.tool]
                if isinstance(outcome, Violation):
                    p.refuse(outcome)
                else:
                    p.status = CREATED
    summary = {**_summary(document, context), "notes": [v.to_dict() for v in notes(document, context, planned)]}
    return {"document": summary, "operations": [p.view() for p in planned]}


def _off_the_hub(budget: Budget, gone: Callable[[], bool] | None, text: str,
                 options: ImportOptions) -> tuple[dict[str, Any], Context, list[Planned]]:
    """`_read_and_map` on a thread of the worker's pool, this request waiting for it.

    Reading and mapping are plain CPU work that can take seconds on a large YAML document: on a thread of its own,
    the gevent hub (every other request and call of this worker) keeps running alongside it. A thread cannot be
    stopped from outside, so the work looks at its budget at every step: when this request stops waiting (its
    client has gone, the deadline has passed while the thread is inside the parser, or the request itself is ended
    by a timeout or a stop), the budget is abandoned and the work ends at its next step instead of running on for
    nobody. Its outcome, an answer or a refusal, comes back as a value: an exception raised on a pool thread would
    also be printed there as a traceback.
    """
    done = gevent.get_hub().threadpool.spawn(_outcome, _read_and_map, text, options, budget)
    try:
        while not done.ready():
            done.wait(WATCH_SECONDS)
            if done.ready():
                break
            if gone is not None and gone():
                raise client_gone()
            if budget.past_deadline():
                raise refused("document-too-complex")
    finally:
        if not done.ready():
            budget.abandon()
    succeeded, value = done.get()
    if not succeeded:
        raise value
    return value


def _outcome(work: Callable[..., Any], *args: Any) -> tuple[bool, Any]:
    """(True, what `work` returned) or (False, the exception it raised)."""
    try:
        return True, work(*args)
    except Exception as error:  # handed to the waiting request, which raises it there
        return False, error


def _read_and_map(text: str, options: ImportOptions,
                  budget: Budget | None = None) -> tuple[dict[str, Any], Context, list[Planned]]:
    """The document, what its operations share, and each operation mapped and chosen, within `budget`. No
    database, no network."""
    budget = budget or Budget()
    document = read_document(text, budget)
    base = options.url  # a relative server URL is relative to where the document was fetched from
    resolver = Resolver(document, budget)
    context = Context(resolver=resolver, base=base, chosen_url=chosen_server(document, options.server, base),
                      default_url=first_server(document.get("servers") or [{"url": "/"}], base),
                      server_of=lambda servers: first_server(servers, base),
                      subject_parameter=options.subject_parameter, security=document.get("security"),
                      project=options.project)
    planned = []
    for operation in _operations(document, resolver):
        budget.check()
        planned.append(_plan(operation, context))
    _choose(planned, options.operations)
    _choose_approvals(planned, options.requires_approval)
    if options.subject_parameter and not any(
            p.mapped.registration and p.mapped.registration["scope"] == "per_user" for p in planned):
        raise refused("subject-parameter-unknown", field="subject_parameter")
    return document, context, planned


def _operations(document: dict[str, Any], resolver: Resolver) -> list[Operation | Planned]:
    """Every operation under `paths`, in the document's order; a path item that cannot be read stands as one
    refused entry."""
    found: list[Operation | Planned] = []
    paths = document.get("paths") or {}
    for path, item in paths.items():
        path = str(path) if str(path).startswith("/") else f"/{path}"
        try:
            item = resolver.resolve(item)
        except RefError as error:
            entry = Planned(f"* {path}", None, Mapped(tool=""))
            entry.refuse(Violation(f"$ref {error.ref}", error.rule, violation("", error.rule).message))
            found.append(entry)
            continue
        if not isinstance(item, dict):
            continue
        for method in METHODS:
            node = item.get(method)
            if isinstance(node, dict):
                operation_id = node.get("operationId")
                found.append(Operation(method.upper(), path, operation_id if isinstance(operation_id, str) else None,
                                       node, item))
        if len(found) > limits.MAX_IMPORT_OPERATIONS:
            raise refused("too-many-operations")
    return found


def _plan(operation: Operation | Planned, context: Context) -> Planned:
    if isinstance(operation, Planned):
        return operation
    mapped = map_operation(operation, context)
    planned = Planned(operation.key, operation.operation_id, mapped, action=REGISTER)
    if any(v.rule == "method-unsupported" for v in mapped.errors):
        planned.status, planned.action, planned.errors = SKIPPED, None, list(mapped.errors)
    elif mapped.errors:
        planned.refuse(*mapped.errors)
    return planned


def _choose(planned: list[Planned], chosen: tuple[str, ...] | None) -> None:
    """Skip what was not chosen (422 on `operations[i]` for a choice that matches nothing); then refuse every
    chosen operation whose tool name another chosen one also takes."""
    if chosen is not None:
        _unknown([(f"operations[{i}]", c) for i, c in enumerate(chosen)], planned)
        for p in planned:
            if p.status != SKIPPED and not any(_matches(c, p) for c in chosen):
                p.status, p.action, p.errors = SKIPPED, None, [violation("operation", "operation-not-chosen")]
    by_name: dict[str, list[Planned]] = {}
    for p in planned:
        if p.status in (READY, REFUSED) and p.mapped.tool:
            by_name.setdefault(p.mapped.tool, []).append(p)
    for same in by_name.values():
        if len(same) > 1:
            for p in same:
                p.refuse(violation("name", "operation-name-collision"))


def _choose_approvals(planned: list[Planned], choices: tuple[tuple[str, bool], ...]) -> None:
    """The person's approval choices (422 on `requires_approval.<choice>` for one that matches no operation)."""
    _unknown([(f"requires_approval.{c}", c) for c, _ in choices], planned)
    for choice, required in choices:
        for p in planned:
            if _matches(choice, p) and p.status == READY:
                p.mapped.choose_approval(required)
                if p.mapped.errors:
                    p.refuse(*p.mapped.errors)


def _unknown(choices: list[tuple[str, str]], planned: list[Planned]) -> None:
    """422 `operation-unknown`, its own code and sentence, naming each (field, choice) that matches no operation."""
    missing = [violation(name, UNKNOWN) for name, choice in choices if not any(_matches(choice, p) for p in planned)]
    if missing:
        raise ServiceError(422, UNKNOWN, RULES[UNKNOWN], missing)


def _matches(choice: str, planned: Planned) -> bool:
    """An operation is chosen by its operationId as written (any characters: `find pet by id`), or by
    `METHOD /path` (the method in any case)."""
    if choice == planned.operation_id:
        return True
    method, _, path = choice.strip().partition(" ")
    return path.strip().startswith("/") and f"{method.upper()} {path.strip()}" == planned.key


def _check_names(organization: Organization, planned: list[Planned], update_existing: bool,
                 project: Project | None) -> None:
    """A ready operation whose tool exists is refused as taken, or with `update_existing` becomes a new draft of it
    (refused when that tool already has a draft or belongs to another project), keeping what the document cannot
    or does not say of the tool's latest version."""
    ready = {p.mapped.tool: p for p in planned if p.status == READY}
    if not ready:
        return
    existing = Tool.select().where(Tool.organization == organization, Tool.name.in_(list(ready)))
    with_draft = {d.tool_id for d in ToolDraft.select(ToolDraft.tool).join(Tool).where(
        Tool.organization == organization, Tool.name.in_(list(ready)))}
    for tool in existing:
        p = ready[tool.name]
        if not update_existing:
            p.refuse(violation("name", "name-taken"))
        elif tool.project_id != (project.id if project else None):
            p.refuse(violation("project", "project-immutable"))
        elif tool.id in with_draft:
            p.refuse(violation("name", "draft-exists"))
        else:
            p.action = NEW_DRAFT
            latest = latest_version(tool)
            p.kept, refusing = keep_existing(p.mapped, latest.definition if latest else {})
            if refusing:
                p.refuse(*refusing)


@retry_transient
def write_drafts(organization: Organization, ready: list[Planned], project: Project | None, actor: str,
                 title: str, text: str) -> dict[str, Any]:
    """Write every ready operation's draft in one transaction, with one audit record naming them all.

    Returns each tool name's outcome: "created", or the violation that refuses it now (a concurrent write took the
    name or started a draft since the preview was made).
    """
    outcomes: dict[str, Any] = {}
    written: dict[str, Any] = {}
    with unique_or(concurrent_change()), write_transaction():
        names = [p.mapped.tool for p in ready]
        existing = {t.name: t for t in Tool.select().where(Tool.organization == organization, Tool.name.in_(names))}
        for p in ready:
            definition, tool = p.mapped.definition, existing.get(p.mapped.tool)
            assert definition is not None  # a ready operation broke no rule
            if p.action == REGISTER and tool is not None:
                outcomes[definition.name] = violation("name", "name-taken")
            elif p.action == NEW_DRAFT and (tool is None or ToolDraft.get_or_none(ToolDraft.tool == tool)):
                outcomes[definition.name] = violation("name", "draft-exists")
            else:
                if p.action == REGISTER:
                    label = (p.mapped.registration or {}).get("display_name") or definition.name
                    create_tool_in_transaction(organization, definition, label, project, actor)
                else:
                    assert tool is not None  # a new draft of a missing tool is refused above
                    start_draft_in_transaction(tool, actor, definition)
                outcomes[definition.name] = CREATED
                written[definition.name] = {"action": p.action, "definition": definition.to_dict()}
        if written:
            audit.record(organization, actor, audit.IMPORT, audit.OPENAPI_DOCUMENT, title, after={
                "document_sha256": hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest(),
                "drafts": written})
    return outcomes


def _project(organization: Organization, name: str | None) -> Project | None:
    if name is None:
        return None
    project = Project.get_or_none(Project.organization == organization, Project.name == name)
    if project is None:
        raise invalid([violation("project", "project-unknown")])
    return project


def _title(document: dict[str, Any]) -> str:
    info = document.get("info")
    if not isinstance(info, dict):
        info = {}
    title = " ".join(str(info.get(k)).strip() for k in ("title", "version") if info.get(k) is not None)
    return (title or "OpenAPI document")[:200]


def _summary(document: dict[str, Any], context: Context) -> dict[str, Any]:
    info = document.get("info")
    if not isinstance(info, dict):
        info = {}
    return {"openapi": str(document["openapi"]), "title": info.get("title"),
            "version": None if info.get("version") is None else str(info.get("version")),
            "server": context.chosen_url or context.default_url}


def notes(document: dict[str, Any], context: Context, planned: list[Planned]) -> list[Violation]:
    """What holds for the whole document, said once above its operations: credentials its chosen operations ask for
    are not carried, and servers it lists besides the one used are not called."""
    found = []
    if any(p.mapped.needs_auth for p in planned if p.status != SKIPPED):
        found.append(violation("security", "auth-not-carried"))
    used = (context.chosen_url or context.default_url or "").rstrip("/")
    servers = document.get("servers")
    listed = {u.rstrip("/") for u in (server_url(s, context.base) for s in
                                       (servers if isinstance(servers, list) else [])) if u}
    if listed - {used}:
        found.append(violation("servers", "servers-ignored"))
    return found
