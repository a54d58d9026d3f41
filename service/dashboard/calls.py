"""What the playground shows about each call: its result, its time, and the assertion behind it. No Flask.

The assertion is shown once: for every call that was made, the one the platform signed and sent, decoded (header
and claims). When the endpoint is the mock backend's echo, its answer carries the claims it verified (never the token:
an echo of the Authorization header would hand the model a live credential), and the page says whether they are the
signed ones, showing them apart only when they differ. For a call whose arguments did not fit, the page lists each
argument and what is wrong with it; the model itself gets only the fixed failure object. A call held for the
person's approval shows the approval the model is told of (`held`): nothing was sent yet.
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


def verified_claims(output: str | None) -> dict[str, Any] | None:
    """From an echo answer: the claims the endpoint says it verified; None when the answer is not an echo."""
    try:
        echo = json.loads(output) if output else None
    except ValueError:
        return None
    if not isinstance(echo, dict) or not isinstance(echo.get("headers"), dict):
        return None
    return echo["claims"] if isinstance(echo.get("claims"), dict) else None


def pretty(text: str | None) -> str:
    """A body as the page shows it: indented when it is JSON, as it came otherwise."""
    if text is None:
        return ""
    try:
        return json.dumps(json.loads(text), indent=2, ensure_ascii=False)
    except ValueError:
        return text


def shown_results(results: list[dict[str, Any]], assertions: list[str | None],
                  found: list[tuple[tuple[str, str], ...]]) -> list[dict[str, Any]]:
    """Each result as the model sees it, with the call's time, the assertion signed for it (None where nothing was
    called), whether the endpoint verified those very claims, and any arguments that did not fit (`found`, for the
    admin only); all lists are in the calls' order."""
    shown = []
    for result, token, problems in zip(results, assertions, found):
        signed = decode_unverified(token) if token else None
        verified = verified_claims(result.get("output"))
        shown.append({
            "result": result,
            "held": result.get("approval"),
            "error": json.dumps(result["error"]) if "error" in result else None,
            "output": pretty(result.get("output")),
            "latency_ms": result.get("latency_ms"),
            "signed": signed,
            "signed_text": json.dumps(signed, indent=2, ensure_ascii=False) if signed else None,
            "verified": verified,
            "verified_same": verified is not None and signed is not None and verified == signed["claims"],
            "problems": [{"argument": argument, "problem": problem} for argument, problem in problems],
        })
    return shown

_EXAMPLES = {"string": "", "number": 0, "boolean": False, "array": [], "object": {}}


def example_arguments(schema: dict[str, Any]) -> str:
    """Arguments to start from for a tool the model is offered: each required parameter with an empty value."""
    properties = schema.get("properties", {})
    example = {name: _EXAMPLES.get(properties.get(name, {}).get("type"), "") for name in schema.get("required", [])}
    return json.dumps(example)
