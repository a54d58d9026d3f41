"""Conversations, turns and steps: resolve what the session may call, run it in parallel, record it.

The dispatcher does the calling; this module decides what is called, for whom, signed by which key,
and records each call afterwards in one batch per step (never a body, never a token).
"""
from __future__ import annotations

import json
import logging
import secrets
import time
from collections import OrderedDict
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Sequence
from urllib.parse import urlsplit

from service import tracing
from service.catalogue import Violation, violation
from service.config import Config
from service.conversations.held import PENDING, Held, approval_event, hold
from service.conversations.offered import PinnedTool, offered, pinned_tools, resolve_project_version
from service.conversations.records import write_call_records
from service.conversations.sessions import Session
from service.conversations.slots import CallSlots
from service.database import generation, released
from service.dispatch import (
    DECLINED,
    INVALID_ARGUMENTS,
    UNKNOWN_TOOL,
    AddressGuard,
    CallOutcome,
    InvalidArguments,
    build_request,
    call_tool,
    run_step,
    worded,
)
from service.errors import ServiceError, not_found
from service.keys import mint_assertion, new_turn_id
from service.keys.store import signing_key
from service.limits import MAX_CALLS_PER_STEP
from service.models import Approval, Conversation, Turn, now
from service.records import calls as calls_log
from service.records import metrics
from service.registry import get_project
from service.text import json_text_problems, recordable, text_problem

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Dispatcher:
    """What every call needs from the deployment: settings (issuer, secret), the address guard, and each
    organization's share of calls in flight."""

    config: Config
    guard: AddressGuard
    slots: CallSlots


@dataclass(frozen=True)
class ModelCall:
    """One call the model asked for in a step; `approval` is the person's approval of it, once given."""

    id: str
    name: str
    arguments: Any
    approval: str | None = None


def _new_id() -> str:
    return secrets.token_urlsafe(16)


def get_conversation(session: Session, conversation_id: str) -> Conversation:
    """The conversation, only for the subject of the organization that opened it; 404 for anyone else."""
    conversation = Conversation.get_or_none(
        Conversation.id == conversation_id, Conversation.organization == session.organization,
        Conversation.subject == session.subject)
    if conversation is None:
        raise not_found("conversation")
    return conversation


#: Conversations and turns never change once made, so a step's check that the turn belongs to the session's
#: conversation is remembered: (database binding, conversation id, turn id) → the conversation and the turn.
_known_turns: OrderedDict[tuple[int, str, str], tuple[Conversation, Turn]] = OrderedDict()
MAX_KNOWN_TURNS = 10_000


def get_conversation_turn(session: Session, conversation_id: str, turn_id: str) -> tuple[Conversation, Turn]:
    """The session's conversation and its turn, in one statement (or none, once known); 404 for anyone else's."""
    key = (generation(), conversation_id, turn_id)
    known = _known_turns.get(key)
    if known is None:
        conversation, turn_found = _read_conversation_turn(session, conversation_id, turn_id)
        if not turn_found:
            raise not_found("turn")
        known = _known_turns[key] = (conversation, Turn(id=turn_id, conversation=conversation))
        if len(_known_turns) > MAX_KNOWN_TURNS:
            _known_turns.popitem(last=False)
    elif known[0].organization_id != session.organization.id or known[0].subject != session.subject:
        raise not_found("conversation")
    return known


def _read_conversation_turn(session: Session, conversation_id: str, turn_id: str) -> tuple[Conversation, bool]:
    database = Conversation._meta.database
    row = database.execute_sql(_conversation_turn_sql(database.param),
                               (turn_id, conversation_id, session.organization.id, session.subject)).fetchone()
    if row is None:
        raise not_found("conversation")
    fields = Conversation._meta.sorted_fields
    conversation = Conversation(**{f.name: f.python_value(v) for f, v in zip(fields, row)})
    return conversation, row[len(fields)] is not None


@lru_cache(maxsize=2)
def _conversation_turn_sql(param: str) -> str:
    columns = ", ".join(f"c.{f.column_name}" for f in Conversation._meta.sorted_fields)
    return (f"SELECT {columns}, t.id FROM conversation c "
            f"LEFT JOIN turn t ON t.conversation_id = c.id AND t.id = {param} "
            f"WHERE c.id = {param} AND c.organization_id = {param} AND c.subject = {param}")


def conversation_tools(conversation: Conversation) -> list[PinnedTool]:
    # By id: a published version's tools are cached, so reading its row (or the project's) is only needed for a
    # conversation on the project's draft.
    if conversation.project_version_id is not None:
        return pinned_tools(None, conversation.project_version_id)
    return pinned_tools(conversation.project, None)


def offered_tools(conversation: Conversation, session: Session) -> list[dict[str, Any]]:
    """The tools offered to the model on this request, as {name, description, parameters}."""
    return [t.model_view() for t in offered(conversation_tools(conversation), session.entitlements).values()]


def open_conversation(session: Session, project_name: Any, version: Any, dispatcher: Dispatcher) -> Conversation:
    """Open a conversation and run its session-start tools (those the token is entitled to) in parallel."""
    if not isinstance(project_name, str):
        raise ServiceError(422, "invalid", "Name the project to converse with.",
                           [violation("project", "field-required")])
    project = get_project(session.organization, project_name)
    project_version = resolve_project_version(project, version)
    starters = [t for t in pinned_tools(project, project_version)
                if t.definition.runs_at_session_start and t.entitled(session.entitlements)]
    conversation_id, turn = _new_id(), new_turn_id()
    calls = [ModelCall(id=t.name, name=t.name, arguments={}) for t in starters]
    outcomes = _dispatch(session, turn, calls, {t.name: t for t in starters}, dispatcher, conversation_id,
                         project.id, session_start=True)
    context = [{"tool": t.name, "description": t.definition.description, "authoritative": True,
                **o.to_result()} for t, o in zip(starters, outcomes)]
    return Conversation.create(id=conversation_id, organization=session.organization, project=project,
                               project_version=project_version, subject=session.subject,
                               anonymous=session.anonymous, context=context, created_at=now())


def start_turn(conversation: Conversation) -> Turn:
    """A new turn with a random id (not a counter)."""
    return Turn.create(id=new_turn_id(), conversation=conversation, created_at=now())


#: What a step's 422 for a malformed call says above its violations.
CALL_MALFORMED = "A call is malformed."


def parse_calls(data: Any) -> list[ModelCall]:
    """The step's calls from the request body, or 422 naming each malformed one: not a call, or holding what is not
    text (`call_text_violations`)."""
    raw = data.get("calls") if isinstance(data, dict) else None
    if not isinstance(raw, list) or not raw or len(raw) > MAX_CALLS_PER_STEP:
        raise ServiceError(422, "invalid", "A step is a list of calls.", [violation("calls", "calls-format")])
    problems, calls = [], []
    for i, call in enumerate(raw):
        if not isinstance(call, dict) or not isinstance(call.get("id"), str) or not isinstance(call.get("name"), str):
            problems.append(violation(f"calls[{i}]", "call-format"))
            continue
        calls.append(ModelCall(id=call["id"], name=call["name"], arguments=call.get("arguments", {})))
        problems += call_text_violations(i, calls[-1])
    if problems:
        raise ServiceError(422, "invalid", CALL_MALFORMED, problems)
    return calls


def call_text_violations(index: int, call: ModelCall) -> list[Violation]:
    """What of the `index`th call is not text, each naming its field (`calls[0].id`): its id and name are identifiers
    (no unpaired surrogate, no control character: the approval and the call log store them, the answer repeats
    them), and no key or string of its arguments, at any depth, holds an unpaired surrogate (arguments sent as a JSON
    string are looked into as well). Checked before anything of a step is sent or stored."""
    at = f"calls[{index}]"
    found = [(f"{at}.{field}", problem) for field, value in (("id", call.id), ("name", call.name))
             if (problem := text_problem(value)) is not None]
    arguments = json_text_problems(call.arguments, f"{at}.arguments")
    if not arguments and isinstance(call.arguments, str):
        arguments = json_text_problems(_arguments(call.arguments), f"{at}.arguments")
    return [violation(field, rule) for field, rule in found + arguments]


def _refuse_what_is_not_text(calls: Sequence[ModelCall]) -> None:
    problems = [v for i, call in enumerate(calls) for v in call_text_violations(i, call)]
    if problems:
        raise ServiceError(422, "invalid", CALL_MALFORMED, problems)


def run_model_step(session: Session, conversation: Conversation, turn: Turn, calls: Sequence[ModelCall],
                   dispatcher: Dispatcher, *, assertions: list[str | None] | None = None,
                   found: list[tuple[tuple[str, str], ...]] | None = None,
                   slots_held: bool = False) -> list[dict[str, Any]]:
    """Run one model step: every call in parallel, results in the calls' order.

    Each result is what the model sees (`output` or `error`) plus the call's `latency_ms`; a call of a tool that
    requires approval whose arguments fit is held unsent, and its result is `approval` ({id, status, expires_at})
    alone. A caller that shows people what was sent (the playground) passes `assertions` to receive each call's
    signed assertion, or None where nothing was called, and `found` to receive, for each call, the arguments that
    did not fit and why (empty unless it failed invalid-arguments): the model itself only ever gets the fixed
    failure object. 429 when the organization's share of calls in flight would be passed, unless the caller already
    holds the step's slots (`slots_held`); 422 when a call holds what is not text (`call_text_violations`, which
    `parse_calls` checks already): whoever built the calls, nothing of such a step is sent or stored.
    """
    _refuse_what_is_not_text(calls)
    tools = offered(conversation_tools(conversation), session.entitlements)
    outcomes = _dispatch(session, turn.id, calls, tools, dispatcher, conversation.id, conversation.project_id,
                         session_start=False,
                         assertions=assertions, slots_held=slots_held)
    if found is not None:
        found.extend(outcome.found for outcome in outcomes)
    return [_result(call, outcome) for call, outcome in zip(calls, outcomes)]


def _result(call: ModelCall, outcome: CallOutcome | Held) -> dict[str, Any]:
    if isinstance(outcome, Held):
        return {"id": call.id, "name": call.name, **outcome.to_result()}
    return {"id": call.id, "name": call.name, **outcome.to_result(), "latency_ms": outcome.latency_ms}


def run_decided_call(session: Session, conversation: Conversation, turn: str, call: ModelCall, tool: PinnedTool,
                     dispatcher: Dispatcher, *, approved: bool, assertions: list[str | None] | None = None
                     ) -> dict[str, Any]:
    """The step result of a held call the person decided: approved, it is sent as a step's call is, its assertion
    carrying `call.approval` (the caller holds its slot; `assertions` receives it, as `run_model_step`'s does);
    declined, nothing is sent and it fails `declined`. Either way it is recorded in the call log."""
    if approved:
        outcome = _dispatch(session, turn, [call], {tool.name: tool}, dispatcher, conversation.id,
                            conversation.project_id, session_start=False, slots_held=True, assertions=assertions)[0]
    else:
        outcome = worded(tool.compiled, CallOutcome(DECLINED))
        _record(session, conversation.id, conversation.project_id, turn, [call], {tool.name: tool}, [outcome],
                [None], False)
    return _result(call, outcome)


def _arguments(raw: Any) -> Any:
    """Chat Completions sends arguments as a JSON string; accept that or an object."""
    if isinstance(raw, str):
        try:
            return json.loads(raw) if raw.strip() else {}
        except ValueError:
            return None
    return raw


def _dispatch(session: Session, turn: str, calls: Sequence[ModelCall], tools: dict[str, PinnedTool],
              dispatcher: Dispatcher, conversation_id: str, project_id: int, *, session_start: bool,
              assertions: list[str | None] | None = None, slots_held: bool = False) -> list[CallOutcome | Held]:
    config = dispatcher.config
    issuer = config.issuer(session.organization.slug)
    key = signing_key(session.organization, config.secret_key) if calls else None
    jtis: list[str | None] = [None] * len(calls)
    signed: list[str | None] = [None] * len(calls)
    held: dict[int, Held] = {}
    approvals: list[dict[str, Any]] = []
    at = now()

    def thunk(index: int, call: ModelCall):
        tool = tools.get(call.name)
        if tool is None:
            return lambda: CallOutcome(UNKNOWN_TOOL)
        arguments = _arguments(call.arguments)
        if not isinstance(arguments, dict):
            not_object = worded(tool.compiled, CallOutcome(INVALID_ARGUMENTS, detail="arguments are not a JSON object",
                                                           found=(("arguments", "not a JSON object"),)))
            return lambda: not_object
        if tool.definition.requires_approval and call.approval is None and not session_start:
            try:  # decided as for every call, before anything is held
                build_request(tool.compiled, arguments, session.subject)
            except InvalidArguments as exc:
                refused = worded(tool.compiled, CallOutcome(INVALID_ARGUMENTS, detail=str(exc)[:500],
                                                            found=tuple(exc.found)))
                return lambda: refused
            held[index], row = hold(session, conversation_id, turn, call.id, tool, arguments,
                                    config.approval_lifetime_seconds, at)
            approvals.append(row)
            tracing.event("approval held", approval_event(row["id"], tool.name, call.id, conversation_id, PENDING))
            return None

        def sign() -> str:
            assert key is not None  # there are calls: one is signing now
            jtis[index] = _new_id()
            assertion = mint_assertion(key, issuer, call.name, session.subject, session.anonymous, turn,
                                       time.time(), jti=jtis[index], approval=call.approval)
            signed[index] = assertion
            return assertion

        return lambda: call_tool(tool.compiled, arguments, subject=session.subject, guard=dispatcher.guard,
                                 sign=sign, deadline=config.call_deadline_seconds,
                                 shaped_bytes=config.max_shaped_response_bytes)

    thunks = [thunk(i, c) for i, c in enumerate(calls)]
    if tracing.state.tracer is not None:
        thunks = _traced(thunks, calls, tools, conversation_id, session_start)
    sent = [i for i, t in enumerate(thunks) if t is not None]
    with dispatcher.slots.held(session.organization.id, 0 if slots_held else len(sent)):
        if approvals:
            # Stored before any call goes out: a database that refuses them refuses the step, and nothing was sent.
            Approval.insert_many(approvals).execute()
            for row in approvals:
                metrics.approvals(session.organization.slug, row["tool"], row["status"])
        # The connection goes back to the pool for the calls' whole wait; recording takes one again.
        with released():
            outcomes = run_step([thunks[i] for i in sent]) if sent else []
    # Only calls that ran are in the call log; a held one is recorded once the person decides it.
    _record(session, conversation_id, project_id, turn, [calls[i] for i in sent], tools, outcomes,
            [jtis[i] for i in sent], session_start)
    if assertions is not None:
        assertions.extend(signed)
    ran = dict(zip(sent, outcomes))
    return [held[i] if i in held else ran[i] for i in range(len(calls))]


@lru_cache(maxsize=1024)
def _hostname(origin: str) -> str | None:
    return urlsplit(origin).hostname


def _traced(thunks, calls, tools, conversation_id, session_start) -> list:
    """Each call's thunk inside its `execute_tool` span, a child of the step's (service.tracing)."""
    def address(name: str) -> str | None:
        tool = tools.get(name)
        return _hostname(tool.compiled.origin) if tool is not None else None

    return [None if t is None else tracing.tool_call(t, recordable(c.name[:64]), recordable(c.id[:64]),
                                                     conversation_id, address(c.name), session_start)
            for t, c in zip(thunks, calls)]


def _record(session, conversation_id, project_id, turn, calls, tools, outcomes, jtis, session_start) -> None:
    """The step's records, after the calls are done, before its answer (with any step ending at the same moment:
    records.py); the call path itself writes nothing. `project_id`, the conversation's project, goes to the
    rollups only (a session-start call is recorded before its conversation is stored)."""
    if not calls:
        return
    created = now()
    rows = [{
        "organization": session.organization.id, "conversation_id": conversation_id, "turn": turn,
        "tool": recordable(call.name[:64]), "tool_version": tools[call.name].version if call.name in tools else None,
        "subject": session.subject, "anonymous": session.anonymous, "kind": o.kind, "http_code": o.http_code,
        "latency_ms": o.latency_ms, "size_chars": o.size_chars, "raw_bytes": o.raw_bytes, "jti": jti,
        "approval": call.approval,
        "session_start": session_start,
        "created_at": created, "project": project_id,
    } for call, o, jti in zip(calls, outcomes, jtis)]
    try:
        write_call_records(rows)
    except BaseException:
        # The calls were made, with signed assertions: an operator sees them in the metrics and the log even when the
        # database refused their records. The refusal is still what the step answers (503).
        try:
            calls_log.observe(session.organization, rows, session_start=session_start)
        except Exception:  # never in place of the refusal
            log.exception("calls whose records were refused could not be counted")
        raise
    calls_log.observe(session.organization, rows, session_start=session_start)  # metrics and one log line a call
