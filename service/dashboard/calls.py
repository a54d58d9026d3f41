"""What the playground shows about each call: its result, its time, and the assertion behind it. No Flask.

Two views of the assertion, both labelled for what they are:
- *signed*: for every call that was made, the assertion the platform signed and sent, decoded (header and claims);
- *received*: when the endpoint is the mock backend's echo, its answer carries the claims it verified and the
  Authorization header it got, so the page decodes exactly the token the endpoint received.
"""
from __future__ import annotations

import base64
import binascii
import json
from typing import Any


def decode_segment(segment: str) -> Any:
    """One base64url JSON segment of a compact JWT, or None if it is not one. Shown, never trusted."""
    try:
        return json.loads(base64.urlsafe_b64decode(segment + "=" * (-len(segment) % 4)))
    except (binascii.Error, ValueError, UnicodeDecodeError):
        return None


def decode_unverified(token: str) -> dict[str, Any] | None:
    """The header and claims of a compact JWT, for display only (the endpoint did the verifying)."""
    parts = token.split(".")
    if len(parts) != 3:
        return None
    header, claims = decode_segment(parts[0]), decode_segment(parts[1])
    if not isinstance(header, dict) or not isinstance(claims, dict):
        return None
    return {"header": header, "claims": claims}


def received_assertion(output: str | None) -> dict[str, Any] | None:
    """From an echo answer: the Bearer token it received, decoded, and the claims it says it verified."""
    try:
        echo = json.loads(output) if output else None
    except ValueError:
        return None
    if not isinstance(echo, dict) or not isinstance(echo.get("headers"), dict):
        return None
    headers = {str(k).lower(): v for k, v in echo["headers"].items()}
    scheme, _, token = str(headers.get("authorization", "")).partition(" ")
    decoded = decode_unverified(token) if scheme.lower() == "bearer" else None
    if decoded is None and not isinstance(echo.get("claims"), dict):
        return None
    return {"token": decoded, "verified": echo.get("claims")}


def pretty(text: str | None) -> str:
    """A body as the page shows it: indented when it is JSON, as it came otherwise."""
    if text is None:
        return ""
    try:
        return json.dumps(json.loads(text), indent=2, ensure_ascii=False)
    except ValueError:
        return text


def shown_results(results: list[dict[str, Any]], assertions: list[str | None]) -> list[dict[str, Any]]:
    """Each result as the model sees it, with the call's time and the assertion signed for it (None where
    nothing was called); both lists are in the calls' order."""
    return [{
        "result": result,
        "error": json.dumps(result["error"]) if "error" in result else None,
        "output": pretty(result.get("output")),
        "latency_ms": result.get("latency_ms"),
        "signed": decode_unverified(token) if token else None,
        "received": received_assertion(result.get("output")),
    } for result, token in zip(results, assertions)]

_EXAMPLES = {"string": "", "number": 0, "boolean": False, "array": [], "object": {}}


def example_arguments(schema: dict[str, Any]) -> str:
    """Arguments to start from for a tool the model is offered: each required parameter with an empty value."""
    properties = schema.get("properties", {})
    example = {name: _EXAMPLES.get(properties.get(name, {}).get("type"), "") for name in schema.get("required", [])}
    return json.dumps(example)
