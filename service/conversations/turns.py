"""The turn loop: the platform runs a whole turn with the configured model.

A turn starts with the person's message. The model is given the conversation so far, the session-start
context (labelled and marked authoritative) and the tools offered to this session; every call of a model
step runs in parallel through the dispatcher, under the one turn id; the results go back to the model; and
this repeats until the model answers. A step limit and a deadline stop a model that loops, and a model
that fails ends the turn with a clear reason, never an exception: whatever was said is kept, message by
message, as it happens. A step that holds a call for the person's approval pauses the turn, which a message
without text continues once every approval is decided (service.conversations.paused).

The loop is a generator of events, `("turn" | "step" | "call" | "reply", data)`, so an app may watch a turn
as it runs; `run_turn` drives it to the end. No Flask here.
"""
from __future__ import annotations

import logging
import secrets
import time
from dataclasses import dataclass
from typing import Any, Iterator

import gevent
from peewee import IntegrityError

from service import tracing
from service.catalogue import violation
from service.config import Config
from service.conversations.approvals import approval_views
from service.conversations.paused import (
    AWAITING_APPROVAL,
    hand_over,
    held_approvals,
    pause_note,
    paused_turn,
    refuse_message,
    steps_taken,
)
from service.conversations.runs import (
    Dispatcher,
    ModelCall,
    call_text_violations,
    offered_tools,
    run_model_step,
    start_turn,
)
from service.conversations.sessions import Session
from service.conversations.transcript import model_transcript
from service.database import released, write_transaction
from service.errors import TOO_MANY_CALLS, ServiceError, nothing_to_continue
from service.limits import CALL_DEADLINE_SECONDS, MAX_CALLS_PER_STEP, MAX_MESSAGE_CHARS
from service.llm import (
    MODEL_MALFORMED,
    MODEL_REFUSED,
    MODEL_TIMED_OUT,
    MODEL_UNREACHABLE,
    ModelAdapter,
    ModelAnswer,
    ModelFailure,
    ModelMessage,
    ModelRequest,
    ToolResult,
    ToolSpec,
    context_prompt,
)
from service.models import Conversation, Message, Turn, TurnLock, now
from service.text import json_text_problems

log = logging.getLogger(__name__)

#: Why the platform stopped a turn, besides the model failure kinds (service.llm).
STEP_LIMIT = "step-limit"
TURN_DEADLINE = "turn-deadline"

#: A model that was unreachable or answered 5xx is asked once more after this pause, if the deadline allows.
MODEL_RETRY_PAUSE_SECONDS = 0.25
MODEL_ATTEMPTS = 2

#: A turn lock outlives the deadline by a step's worth (a step under way finishes) and this margin.
LOCK_MARGIN_SECONDS = 5.0


@dataclass(frozen=True)
class TurnLimits:
    """What keeps a looping model from running forever."""

    max_steps: int
    deadline_seconds: float

    @classmethod
    def from_config(cls, config: Config) -> "TurnLimits":
        return cls(config.max_steps_per_turn, config.turn_deadline_seconds)


def parse_text(data: Any) -> str | None:
    """The person's message from a request body; None for a body without `text`, which continues the turn paused
    for approval; or 422."""
    if isinstance(data, dict) and "text" not in data:
        return None
    text = data.get("text") if isinstance(data, dict) else None
    if not isinstance(text, str) or not text.strip() or len(text) > MAX_MESSAGE_CHARS:
        raise ServiceError(422, "invalid", "A message is the person's text (or no `text` at all, to continue a turn "
                                          "paused for approval).", [violation("text", "message-format")])
    if problems := json_text_problems(text, "text"):  # stored, then sent to the model: it must be text
        raise ServiceError(422, "invalid", "A message is the person's text.",
                           [violation(field, rule) for field, rule in problems])
    return text


def stop_message(reason: str, limits: TurnLimits, http_code: int | None = None) -> str:
    """The sentence an app is given when the platform stops a turn, one per reason."""
    return {
        STEP_LIMIT: f"The model asked for tools in more than {limits.max_steps} steps, the most one turn may take; "
                    "the turn was stopped.",
        TURN_DEADLINE: f"The turn ran past its deadline of {limits.deadline_seconds:g} seconds and was stopped.",
        MODEL_UNREACHABLE: "The model could not be reached; the turn was stopped.",
        MODEL_TIMED_OUT: "The model did not answer before the turn's deadline; the turn was stopped.",
        MODEL_REFUSED: f"The model's API refused the request (HTTP {http_code}); the turn was stopped.",
        MODEL_MALFORMED: "The model's answer could not be understood; the turn was stopped.",
        TOO_MANY_CALLS: "This organization already has its share of tool calls in flight here; the turn was "
                        "stopped before the step's calls were made. Send the message again shortly.",
        AWAITING_APPROVAL: "The model asked for a call that the person must approve first; the turn is paused until "
                           "each call awaiting approval is decided and the turn is continued.",
    }[reason]


def history(conversation: Conversation) -> list[dict[str, Any]]:
    """The conversation's messages in order: `{"turn", "role", "at", …}` with the role's own fields."""
    return [{"turn": row.turn, "role": row.role, "at": row.created_at, **row.content}
            for row in Message.select().where(Message.conversation == conversation).order_by(Message.id)]


def run_turn(session: Session, conversation: Conversation, text: str | None, adapter: ModelAdapter,
             dispatcher: Dispatcher, limits: TurnLimits) -> dict[str, Any]:
    """Run one whole turn (or continue the paused one, `text` None); the result is `turn_events`'s last."""
    result: dict[str, Any] = {}
    for _kind, result in turn_events(session, conversation, text, adapter, dispatcher, limits):  # noqa: B007
        pass  # run the turn through; the last event's is its result
    return result


def turn_events(session: Session, conversation: Conversation, text: str | None, adapter: ModelAdapter,
                dispatcher: Dispatcher, limits: TurnLimits) -> Iterator[tuple[str, dict[str, Any]]]:
    """`_turn_events`, inside the turn's span while tracing (an `invoke_agent` span: its model calls and steps
    under it)."""
    events = _turn_events(session, conversation, text, adapter, dispatcher, limits)
    return tracing.traced_events(events, "invoke_agent toolgate", {
        "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "toolgate",
        "gen_ai.conversation.id": conversation.id, "gen_ai.provider.name": adapter.provider,
        "gen_ai.request.model": adapter.model})


def _turn_events(session: Session, conversation: Conversation, text: str | None, adapter: ModelAdapter,
                 dispatcher: Dispatcher, limits: TurnLimits) -> Iterator[tuple[str, dict[str, Any]]]:
    """Run one turn, yielding its events as they happen; `text` None continues the turn paused for approval.

    `("turn", {"turn"})` first, or instead a 409 ServiceError that changes nothing: the conversation is already
    running a turn (`turn-in-progress`); a message while a turn is paused (`approvals-pending` while any approval
    is undecided, `turn-awaits-continue` once none is); a continue with no turn paused (`nothing-to-continue`) or
    with approvals undecided (`approvals-pending`). A continue then yields `("call", {"step", "id", "name",
    "output" | "error"})` for each held call's decided result. `("step", {"step", "calls"})` when a step's calls
    start; `("call", …)` for each result; last `("reply", {"turn", "reply", "steps", "stopped", "approvals",
    "decided"})`: `reply` is the model's answer, or None with `stopped` = `{"reason", "message"}` when the
    platform stopped the turn; `approvals` the approvals a paused turn awaits (as `list_approvals` shows them);
    `decided`, on a continue, `[{"approval", "result"}]` for each result the model was handed in place of a pending
    one. `steps` are this request's; a continue counts the steps before the pause against the limit, and its
    deadline starts at the continue.
    """
    holder = _lock(conversation, limits)
    try:
        rows = list(Message.select().where(Message.conversation == conversation).order_by(Message.id))
        paused = paused_turn(rows)
        if text is None:
            if paused is None:
                raise nothing_to_continue()
            decided = hand_over(session, conversation, paused, dispatcher)
            turn, prior = Turn(id=paused.turn, conversation=conversation), steps_taken(rows, paused.turn)
            tracing.annotate({"toolgate.turn.id": turn.id})
            # Kept before anything is streamed: once handed over, the turn is no longer paused, whatever follows.
            rows.append(_store(conversation, turn, "tool", {"results": [d["result"] for d in decided],
                                                            "approvals": [d["approval"]["id"] for d in decided]}))
            yield "turn", {"turn": turn.id}
            for item in decided:
                yield "call", {"step": prior - 1, **item["result"]}
        else:
            if paused is not None:
                refuse_message(conversation, paused, dispatcher.config)
            turn, prior, decided = start_turn(conversation), 0, []
            tracing.annotate({"toolgate.turn.id": turn.id})
            yield "turn", {"turn": turn.id}
            rows.append(_store(conversation, turn, "user", {"text": text}))
        yield from _steps(session, conversation, turn, rows, adapter, dispatcher, limits, prior, decided)
    finally:
        TurnLock.delete().where(TurnLock.conversation == conversation, TurnLock.holder == holder).execute()


def _steps(session, conversation, turn, rows, adapter, dispatcher, limits, prior: int,
           decided: list) -> Iterator[tuple[str, dict[str, Any]]]:
    deadline = time.monotonic() + limits.deadline_seconds
    transcript = model_transcript(rows)
    system = context_prompt(conversation.context)
    tools = tuple(ToolSpec(**tool) for tool in offered_tools(conversation, session))
    steps: list[dict[str, Any]] = []
    reply, stopped, awaiting = None, None, []
    while True:
        if time.monotonic() >= deadline:
            stopped = _stopped(TURN_DEADLINE, limits)
            break
        try:
            answer = _ask(adapter, ModelRequest(system, tuple(transcript), tools), deadline)
        except ModelFailure as failure:
            log.warning("turn %s: the model failed (%s)", turn.id, failure)
            stopped = _stopped(failure.kind, limits, failure.http_code)
            break
        if not answer.calls:
            _store(conversation, turn, "assistant", {"text": answer.text})
            reply = answer.text
            break
        if prior + len(steps) >= limits.max_steps:
            # Calls that will never run are not kept: every call in the history has its result.
            if answer.text:
                _store(conversation, turn, "assistant", {"text": answer.text})
            stopped = _stopped(STEP_LIMIT, limits)
            break
        try:
            step = yield from _step(session, conversation, turn, answer, dispatcher, prior + len(steps))
        except ServiceError as refused:
            if refused.code != TOO_MANY_CALLS:
                raise
            if answer.text:
                _store(conversation, turn, "assistant", {"text": answer.text})
            stopped = _stopped(TOO_MANY_CALLS, limits)
            break
        steps.append(step)
        awaiting = held_approvals(step["results"])
        if awaiting:  # the person may take minutes: the turn lets go of the conversation until it is continued
            stopped = _stopped(AWAITING_APPROVAL, limits)
            break
        transcript += [ModelMessage("assistant", answer.text, answer.calls),
                       ModelMessage("tool", results=tuple(ToolResult.from_result(r) for r in step["results"]))]
    if stopped is not None:
        tracing.annotate({"toolgate.turn.stopped": stopped["reason"]})
        _store(conversation, turn, "platform", pause_note(stopped, awaiting) if awaiting else {"stopped": stopped})
    approvals = approval_views(session, conversation, awaiting) if awaiting else []
    yield "reply", {"turn": turn.id, "reply": reply, "steps": steps, "stopped": stopped, "approvals": approvals,
                    "decided": decided}


def _step(session, conversation, turn, answer: ModelAnswer, dispatcher, index: int):
    """One model step: store what the model asked for, run every call in parallel, store the results.

    Yields the step's events as they happen and returns the step: `{"calls", "results", "started_at",
    "elapsed_ms"}`.
    """
    calls = [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in answer.calls]
    model_calls = [ModelCall(c.id, c.name, c.arguments) for c in answer.calls]
    # The slots are taken before anything of the step is stored, so a step refused for the organization's share
    # leaves no calls without results behind.
    with dispatcher.slots.held(session.organization.id, len(model_calls)):
        _store(conversation, turn, "assistant", {"text": answer.text, "calls": calls})
        yield "step", {"step": index, "calls": calls}
        started_at, started = time.time(), time.monotonic()
        with tracing.span(f"step {index}", {"gen_ai.conversation.id": conversation.id, "toolgate.turn.id": turn.id,
                                            "toolgate.step": index}):
            results = run_model_step(session, conversation, turn, model_calls, dispatcher, slots_held=True)
    elapsed_ms = round((time.monotonic() - started) * 1000)
    _store(conversation, turn, "tool", {"results": results})
    for result in results:
        yield "call", {"step": index, **result}
    return {"calls": calls, "results": results, "started_at": started_at, "elapsed_ms": elapsed_ms}


def _ask(adapter: ModelAdapter, request: ModelRequest, deadline: float) -> ModelAnswer:
    """Ask the model within what is left of the turn, once more after a transient failure if time allows."""
    attempt = 1
    while True:
        try:
            with released(), tracing.span(f"chat {adapter.model}", {  # no connection held while the model thinks
                    "gen_ai.operation.name": "chat", "gen_ai.provider.name": adapter.provider,
                    "gen_ai.request.model": adapter.model}):
                answer = adapter.complete(request, max(deadline - time.monotonic(), 0.0))
                if answer.usage is not None:
                    tracing.annotate({"gen_ai.usage.input_tokens": answer.usage[0],
                                      "gen_ai.usage.output_tokens": answer.usage[1]})
            break
        except ModelFailure as failure:
            transient = failure.kind == MODEL_UNREACHABLE or (
                failure.kind == MODEL_REFUSED and (failure.http_code or 0) >= 500)
            if attempt >= MODEL_ATTEMPTS or not transient or deadline - time.monotonic() <= MODEL_RETRY_PAUSE_SECONDS:
                raise
            log.info("the model failed (%s); asking again", failure)
            attempt += 1
            gevent.sleep(MODEL_RETRY_PAUSE_SECONDS)
    if len(answer.calls) > MAX_CALLS_PER_STEP:
        raise ModelFailure(MODEL_MALFORMED, f"{len(answer.calls)} calls in one step, more than {MAX_CALLS_PER_STEP}")
    # A call holding what is not text could be neither stored nor answered: the answer is malformed, and nothing of
    # it is stored or sent.
    problems = [v for i, c in enumerate(answer.calls) for v in call_text_violations(i, ModelCall(c.id, c.name,
                                                                                                 c.arguments))]
    if problems:
        raise ModelFailure(MODEL_MALFORMED, "; ".join(f"{v.field}: {v.rule}" for v in problems[:5]))
    return answer


def _stopped(reason: str, limits: TurnLimits, http_code: int | None = None) -> dict[str, str]:
    return {"reason": reason, "message": stop_message(reason, limits, http_code)}


def _store(conversation: Conversation, turn, role: str, content: dict[str, Any]) -> Message:
    return Message.create(conversation=conversation, turn=turn.id, role=role, content=content, created_at=now())


def _lock(conversation: Conversation, limits: TurnLimits) -> str:
    """Take the conversation's turn lock, or 409: two turns at once would interleave their messages."""
    holder = secrets.token_urlsafe(16)
    expires = now() + limits.deadline_seconds + CALL_DEADLINE_SECONDS + LOCK_MARGIN_SECONDS
    try:
        with write_transaction():
            TurnLock.delete().where(TurnLock.conversation == conversation, TurnLock.expires_at < now()).execute()
            TurnLock.insert(conversation=conversation, holder=holder, expires_at=expires).execute()
    except IntegrityError:
        raise ServiceError(409, "turn-in-progress", "This conversation is already running a turn; "
                                                    "send the next message once it has answered.") from None
    return holder
