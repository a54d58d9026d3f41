"""Conversations: sessions, the tools offered to the model, turns, steps, session-start context, and the
turn loop that runs a whole turn with the configured model."""
from service.conversations.approvals import decide, list_approvals
from service.conversations.offered import PinnedTool, parameters_schema
from service.conversations.runs import (
    Dispatcher,
    ModelCall,
    get_conversation,
    get_conversation_turn,
    offered_tools,
    open_conversation,
    parse_calls,
    run_model_step,
    start_turn,
)
from service.conversations.sessions import Session, authenticate_session
from service.conversations.slots import CallSlots
from service.conversations.turns import (
    STEP_LIMIT,
    TURN_DEADLINE,
    TurnLimits,
    history,
    parse_text,
    run_turn,
    turn_events,
)

__all__ = [
    "CallSlots",
    "Dispatcher",
    "ModelCall",
    "PinnedTool",
    "STEP_LIMIT",
    "Session",
    "TURN_DEADLINE",
    "TurnLimits",
    "authenticate_session",
    "decide",
    "get_conversation",
    "get_conversation_turn",
    "history",
    "list_approvals",
    "offered_tools",
    "open_conversation",
    "parameters_schema",
    "parse_calls",
    "parse_text",
    "run_model_step",
    "run_turn",
    "start_turn",
    "turn_events",
]
