"""The playground: converse with a project version as a test subject, and run a step of calls by hand.

It mints a real session token for the chosen subject (short-lived, re-minted on each request rather than kept),
verifies it as any conversation's token is verified, and then uses the conversation functions the API uses. A call
held for approval is listed with its exact arguments and expiry, and the test subject approves or declines it as a
person would (`decide`, the approvals route's own function), seeing the result and the assertion that was sent.
"""
from __future__ import annotations

import time
from typing import Any

from flask import current_app, redirect, request, session, url_for
from flask.typing import ResponseReturnValue

from service import registry
from service.catalogue import Violation, violation
from service.conversations import (
    ModelCall,
    authenticate_session,
    decide,
    get_conversation,
    list_approvals,
    offered_tools,
    open_conversation,
    run_model_step,
    start_turn,
)
from service.dashboard.calls import example_arguments, pretty, shown_results
from service.dashboard.forms import BLANK_CALL, apply_row_op, calls_from_form, entitlements_from_text
from service.dashboard.web import MINT_SESSIONS, blp, done, page, principal, requires
from service.errors import ServiceError
from service.http import DISPATCHER_KEY, app_config
from service.keys import mint_session_token, subject_fits
from service.keys.store import signing_key
from service.limits import MAX_STORED_INTEGER
from service.ops import why
from service.text import is_text, whole_number

#: A playground token lives only as long as the request that mints it needs (well under the session maximum).
PLAYGROUND_TOKEN_SECONDS = 300
STATE = "playground"
DRAFT = "draft"
#: The start form's buttons: open a conversation, or only explain what such a session would be offered.
START, EXPLAIN = "start", "explain"


def _org():
    return principal().organization


def version_choices() -> list[tuple[str, str]]:
    """(value, label) for every project version one can converse with: each draft and published version."""
    choices = []
    for project in registry.list_projects(_org()):
        view = registry.project_view(project)
        if view["draft"]:
            choices.append((f"{project.name}:{DRAFT}", f"{project.name} — draft version"))
        choices.extend((f"{project.name}:{v['version']}", f"{project.name} — version {v['version']}")
                       for v in reversed(view["versions"]))
    return choices


def as_subject(state: dict[str, Any]):
    """A verified session for the playground's test subject, from a token minted just now."""
    config = app_config(current_app)
    organization = _org()
    token, _ = mint_session_token(signing_key(organization, config.secret_key), config.issuer(organization.slug),
                                  state["subject"], state["anonymous"], state["entitlements"],
                                  PLAYGROUND_TOKEN_SECONDS, time.time())
    return authenticate_session(token, config)


def explanation(state: dict[str, Any]) -> dict[str, Any]:
    """For the chosen project version and claims: each tool, whether it is offered, and why not
    (`ops.why.explain`, the code the API's why-not-offered answers with)."""
    claims = why.Claims(subject=state["subject"], entitlements=frozenset(state["entitlements"]),
                        anonymous=state["anonymous"])
    return why.explain(_org(), state["project"], state["version"], claims)


def _dispatcher():
    return current_app.extensions[DISPATCHER_KEY]


def _page(status: int = 200, *, form: dict | None = None, violations=(), calls=None, results=None,
          elapsed=None, message=None, offers=None, decision=None):
    """The playground. `offers` is an explanation asked for with the start form; without one, the page explains
    what the current conversation's project version offers for its claims. `decision` is an approval just decided,
    with its result shown as a step's are."""
    state = session.get(STATE)
    conversation = tools = approvals = None
    explained = offers is not None
    if state:
        try:
            as_session = as_subject(state)
            conversation = get_conversation(as_session, state["conversation"])
            tools = offered_tools(conversation, as_session)
            approvals = list_approvals(as_session, conversation.id)
        except ServiceError:
            session.pop(STATE, None)
            state = None
    if offers is None and state:
        try:
            offers = explanation(state)
        except ServiceError:  # the project's draft version was published since; the conversation goes on
            offers = None
    if calls is None:
        calls = [{"name": t["name"], "arguments": example_arguments(t["parameters"])} for t in tools or []]
    form = form or state or {"subject": "alice", "entitlements": [], "anonymous": False}
    return page("playground.html", status, violations=violations, choices=version_choices(), form=form,
                state=state, conversation=conversation, tools=tools, calls=calls or [dict(BLANK_CALL)],
                results=results, elapsed=elapsed, message=message, pretty=pretty, offers=offers,
                explained=explained, issuer=app_config(current_app).issuer(_org().slug), approvals=approvals,
                decision=decision)


@blp.get("/playground")
@requires(MINT_SESSIONS)
def playground():
    return _page()


@blp.post("/playground")
@requires(MINT_SESSIONS)
def start_conversation():
    """Open a conversation as the test subject: runs its session-start tools, shows what the model is offered.
    With the *Explain* button, only say what such a session would be offered and why not, opening nothing."""
    project, _, version = request.form.get("version", "").rpartition(":")
    form = {"choice": request.form.get("version", ""), "subject": request.form.get("subject", "").strip(),
            "entitlements": entitlements_from_text(request.form.get("entitlements", "")),
            "anonymous": request.form.get("anonymous") == "on"}
    number = whole_number(version, MAX_STORED_INTEGER)
    problems = []
    if not project or not (version == DRAFT or number):
        problems.append(violation("version", "field-required"))
    if not form["subject"]:
        problems.append(violation("subject", "field-required"))
    elif not subject_fits(form["subject"]):  # the token the playground mints holds it, like any other
        problems.append(violation("subject", "subject-format"))
    if not all(is_text(e) for e in form["entitlements"]):
        problems.append(violation("entitlements", "control-character"))
    if problems:
        return _page(422, form=form, violations=problems)
    state = {**form, "project": project, "version": version if version == DRAFT else number}
    if request.form.get("op", START) == EXPLAIN:
        try:
            return _page(form=form, offers=explanation(state))
        except ServiceError as error:
            return _page(error.status, form=form, violations=error.violations, message=error.message)
    try:
        conversation = open_conversation(as_subject(state), project, state["version"], _dispatcher())
    except ValueError as error:  # the token could not be minted (too many or too long entitlements)
        return _page(422, form=form, violations=[Violation("entitlements", "token-too-big", str(error))])
    except ServiceError as error:
        return _page(error.status, form=form, violations=error.violations, message=error.message)
    session[STATE] = {**state, "conversation": conversation.id}
    return done("Conversation started.", "dashboard.playground")


@blp.post("/playground/step")
@requires(MINT_SESSIONS)
def run_step() -> ResponseReturnValue:
    """Run one step: every call at once, each result or failure object with its time and its assertion."""
    state = session.get(STATE)
    if not state:
        return redirect(url_for("dashboard.playground"))
    calls, typed, problems = calls_from_form(request.form)
    op = request.form.get("op", "run")
    if op != "run":
        return _page(calls=apply_row_op(typed, op, BLANK_CALL))
    if problems:
        return _page(422, violations=problems, calls=typed)
    as_session = as_subject(state)
    conversation = get_conversation(as_session, state["conversation"])
    turn = start_turn(conversation)
    started = time.monotonic()
    assertions: list[str | None] = []
    found: list[tuple[tuple[str, str], ...]] = []
    results = run_model_step(as_session, conversation, turn,
                             [ModelCall(c["id"], c["name"], c["arguments"]) for c in calls], _dispatcher(),
                             assertions=assertions, found=found)
    elapsed = time.monotonic() - started
    return _page(calls=typed, results={"turn": turn.id, "calls": shown_results(results, assertions, found)},
                 elapsed=elapsed)


@blp.post("/playground/approvals/<approval_id>")
@requires(MINT_SESSIONS)
def decide_approval(approval_id: str):
    """Approve or decline a held call as the test subject: approving sends exactly that call once, and the page shows
    its result and the assertion sent, which carries the approval's id."""
    state = session.get(STATE)
    if not state:
        return redirect(url_for("dashboard.playground"))
    assertions: list[str | None] = []
    try:
        decided = decide(as_subject(state), state["conversation"], approval_id,
                         {"decision": request.form.get("decision")}, _dispatcher(), assertions=assertions)
    except ServiceError as error:
        return _page(error.status, violations=error.violations, message=error.message)
    [shown] = shown_results([decided["result"]], assertions or [None], [()])
    return _page(decision={"approval": decided["approval"], "shown": shown})
