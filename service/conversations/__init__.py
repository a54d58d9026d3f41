"""Conversations: sessions, the tools offered to the model, turns, steps and session-start context."""
from .offered import PinnedTool, parameters_schema
from .runs import (
    Dispatcher,
    ModelCall,
    get_conversation,
    get_turn,
    offered_tools,
    open_conversation,
    parse_calls,
    run_model_step,
    start_turn,
)
from .sessions import Session, authenticate_session

__all__ = [name for name in dir() if not name.startswith("_")]
