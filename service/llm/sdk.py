"""What both official clients need alike: an HTTP client that ignores the environment, one bound on
the whole call, and their exceptions mapped to failure kinds in one place.

Both SDKs (openai, anthropic) are generated from one template and share their exception tree, so one
function maps either's; the order of its checks matters and is tested (a timeout is also a
connection error).
"""
from __future__ import annotations

from typing import Any, Callable, TypeVar

import gevent

from service.limits import ERROR_DETAIL_CHARS
from service.llm.interface import MODEL_MALFORMED, MODEL_REFUSED, MODEL_TIMED_OUT, MODEL_UNREACHABLE, ModelFailure

T = TypeVar("T")

#: Sent when no key is configured: local servers (vLLM, Ollama, llama.cpp) need none, but both
#: clients refuse to start without one, and an unset key would make them read it from the environment.
NO_KEY = "no-key"


def http_client(sdk: Any) -> Any:
    """The SDK's own HTTP client with its pool defaults, but deaf to proxy variables and `.netrc`
    (trust_env=False), and not following redirects, so the key is only ever sent to the configured URL."""
    return sdk.DefaultHttpxClient(trust_env=False, follow_redirects=False)


def failure_from(sdk: Any, error: Exception) -> ModelFailure:
    """The failure kind for an exception the SDK raised."""
    detail = f"{type(error).__name__}: {error}"[:ERROR_DETAIL_CHARS]
    if isinstance(error, sdk.APITimeoutError):  # before APIConnectionError, its base class
        return ModelFailure(MODEL_TIMED_OUT, detail)
    if isinstance(error, sdk.APIConnectionError):
        return ModelFailure(MODEL_UNREACHABLE, detail)
    if isinstance(error, sdk.APIStatusError):
        return ModelFailure(MODEL_REFUSED, detail, error.status_code)
    return ModelFailure(MODEL_MALFORMED, detail)


def within(seconds: float, ask: Callable[[], T]) -> T:
    """`ask()`, cut off after `seconds` in all (the clients' own timeouts bound each read, not the call)."""
    timer = gevent.Timeout(seconds)
    timer.start()
    try:
        return ask()
    except gevent.Timeout as fired:
        if fired is not timer:  # someone else's deadline: not ours to silence
            raise
        raise ModelFailure(MODEL_TIMED_OUT, f"no answer within {seconds:.1f} s") from None
    finally:
        timer.close()
