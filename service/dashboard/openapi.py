"""Importing from an OpenAPI document: paste, upload or give an address; preview the table; import the chosen.

A thin page over `service.importing.run_import`, the function the REST API and the MCP server call: the preview is
its dry run, and importing sends the operations ticked in the table. The document stays in the page's text box
between the two (an uploaded file is put there), so what is imported is what was previewed; a document given by
address is fetched again, through the same guard and deadline.
"""
from __future__ import annotations

from typing import Any

from flask import current_app, request

from service import importing, registry
from service.dashboard.web import WRITE_DRAFTS, blp, page, principal, requires
from service.errors import ServiceError
from service.http import DISPATCHER_KEY, client_left
from service.limits import MAX_STORED_INTEGER

PREVIEW, IMPORT = "preview", "import"
#: The most digits a server's index is read from; a longer number is taken as text (and names no server).
MAX_INDEX_DIGITS = len(str(MAX_STORED_INTEGER))


def _state(form, files) -> dict[str, Any]:
    """The page's fields as the import request names them; an uploaded file takes the text box's place."""
    state = {key: (form.get(key) or "").strip() for key in ("url", "server", "subject_parameter", "project")}
    state["document"] = form.get("document") or ""
    upload = files.get("file")
    if upload is not None and upload.filename:
        raw = upload.read()
        try:
            state["document"] = raw.decode("utf-8-sig")
        except UnicodeDecodeError:
            state["document"] = raw.decode("latin-1")  # read_document will say it is not a document
    state["update_existing"] = form.get("update_existing") == "on"
    state["chosen"] = form.getlist("operation")
    state["approvals"] = form.getlist("approval")
    return state


def _request(state: dict[str, Any], *, apply: bool) -> dict[str, Any]:
    body: dict[str, Any] = {key: state[key] for key in ("document", "url", "subject_parameter", "project")
                            if state[key]}
    if state["server"]:
        body["server"] = _server(state["server"])
    if state["update_existing"]:
        body["update_existing"] = True
    if apply:
        # Each ticked operation's approval box, which the preview set to the importer's choice: the person's now.
        body.update(apply=True, operations=state["chosen"],
                    requires_approval={op: op in state["approvals"] for op in state["chosen"]})
    return body


def _server(text: str) -> int | str:
    """The server field as the import takes it: an index when it is a plain number (ASCII digits, no more than an
    index can have), else the URL as typed. `²` passes str.isdigit() and `int()` refuses it, as it refuses 5,000
    digits: both were a 500; now they name no server, and the import says so on the field."""
    if text.isascii() and text.isdigit() and len(text) <= MAX_INDEX_DIGITS:
        return int(text)
    return text


def _render(state: dict[str, Any], result: dict[str, Any] | None = None, status: int = 200, violations=(),
            message: str | None = None):
    return page("import.html", status, violations=violations, state=state, result=result, message=message,
                projects=registry.list_projects(principal().organization))


@blp.get("/tools/new/import")
@requires(WRITE_DRAFTS)
def import_openapi():
    return _render({"document": "", "url": "", "server": "", "subject_parameter": "", "project": "",
                    "update_existing": False, "chosen": [], "approvals": []})


@blp.post("/tools/new/import")
@requires(WRITE_DRAFTS)
def import_openapi_submit():
    """Preview the document's operations, or import the ones ticked as drafts."""
    state = _state(request.form, request.files)
    apply = request.form.get("op") == IMPORT
    if apply and not state["chosen"]:
        return _render(state, status=422, message="Tick at least one operation to import.")
    dispatcher = current_app.extensions[DISPATCHER_KEY]
    who = principal()
    try:
        result = importing.run_import(who.organization, _request(state, apply=apply), who.actor,
                                      guard=dispatcher.guard, deadline=dispatcher.config.call_deadline_seconds,
                                      gone=client_left)
    except ServiceError as error:
        return _render(state, status=error.status, violations=error.violations, message=error.message)
    created = [op for op in result["operations"] if op["status"] == importing.CREATED]
    if apply:
        state["chosen"] = []
        message = (f"Imported {len(created)} operation{'s' if len(created) != 1 else ''} as drafts. Open each to "
                   "review it, then publish it or pin it into a project." if created else None)
        return _render(state, result, message=message)
    state["chosen"] = [op["operation"] for op in result["operations"] if op["status"] == importing.READY]
    return _render(state, result)
