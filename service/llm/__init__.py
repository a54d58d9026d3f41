"""Model adapters: the model APIs the platform runs turns with, behind one small interface.

`adapter_for(config)` builds the configured one: `openai` (any Chat Completions server, through the
official `openai` client) or `anthropic` (the Messages API, through the official `anthropic` client).
The clients are imported only when an adapter is built. No Flask, no database.
"""
from __future__ import annotations

from service.config import Config
from service.errors import ServiceError
from service.llm.interface import (
    MODEL_FAILURE_KINDS,
    MODEL_MALFORMED,
    MODEL_REFUSED,
    MODEL_TIMED_OUT,
    MODEL_UNREACHABLE,
    ModelAdapter,
    ModelAnswer,
    ModelFailure,
    ModelMessage,
    ModelRequest,
    ToolCall,
    ToolResult,
    ToolSpec,
)
from service.llm.prompt import context_prompt

PROVIDERS = ("openai", "anthropic")


def model_not_configured(why: str) -> ServiceError:
    return ServiceError(503, "model-not-configured", f"No model is configured to run turns: {why}")


def adapter_for(config: Config) -> ModelAdapter:
    """The adapter for the configured provider, base URL, model and key; 503 when there is none."""
    if not config.model:
        raise model_not_configured("set TOOLGATE_MODEL (and TOOLGATE_MODEL_PROVIDER, TOOLGATE_MODEL_BASE_URL, "
                                   "TOOLGATE_MODEL_API_KEY as the server needs).")
    if config.model_provider == "openai":
        from service.llm.openai_chat import ChatCompletionsAdapter

        return ChatCompletionsAdapter(config.model_base_url, config.model, config.model_api_key)
    if config.model_provider == "anthropic":
        from service.llm.anthropic_messages import MessagesAdapter

        return MessagesAdapter(config.model_base_url, config.model, config.model_api_key)
    raise model_not_configured(f"TOOLGATE_MODEL_PROVIDER is {config.model_provider!r}; "
                               f"use one of {', '.join(PROVIDERS)}.")


__all__ = [
    "Config",
    "MODEL_FAILURE_KINDS",
    "MODEL_MALFORMED",
    "MODEL_REFUSED",
    "MODEL_TIMED_OUT",
    "MODEL_UNREACHABLE",
    "ModelAdapter",
    "ModelAnswer",
    "ModelFailure",
    "ModelMessage",
    "ModelRequest",
    "PROVIDERS",
    "ServiceError",
    "ToolCall",
    "ToolResult",
    "ToolSpec",
    "adapter_for",
    "context_prompt",
    "model_not_configured",
]
