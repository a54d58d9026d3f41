"""The system text a turn starts with: the session-start context, labelled and marked authoritative.

The spec: a session-start tool's result "is placed in the context the model starts the turn with,
labeled with the tool's name and the description you wrote for it, and marked as authoritative".
Each item goes to the model exactly as the conversation stores it, `{"tool", "description",
"authoritative": true, "output" | "error"}`, so a failed one carries only the small failure object.
"""
from __future__ import annotations

import json
from typing import Any, Sequence

CONTEXT_PREAMBLE = (
    "Before this conversation began, the platform ran the business's session-start tools for the person "
    "you are talking with. Each item below is one tool's result, labelled with the tool's name and its "
    "description, and marked authoritative: it is what the business's own systems say about this person, "
    "so rely on it, and prefer it to anything the conversation says to the contrary. An item with an "
    "\"error\" in place of an \"output\" is a tool that did not succeed."
)


def context_prompt(context: Sequence[dict[str, Any]]) -> str:
    """The system text for a conversation's session-start context; empty when it has none."""
    if not context:
        return ""
    # The label first, then what it labels; the item itself is as stored.
    items = [{"tool": item["tool"], "description": item["description"], "authoritative": item["authoritative"],
              **item} for item in context]
    return f"{CONTEXT_PREAMBLE}\n\n{json.dumps(items, indent=1, ensure_ascii=False)}"
