"""The editor's part on what the model sees (docs/shaping.md): its three fields as a form shows them, their
violations next to the inputs, and *Try it*, which shapes a pasted sample answer with the one shaping function a call
uses (service.dispatch.shaping.preview), before the draft is saved. No Flask here."""
from __future__ import annotations

import json
import re
from typing import Any, Mapping, Sequence

from service.catalogue import RULES, Violation
from service.dispatch.shaping import preview
from service.limits import RESPONSE_CAP_CHARS

SHAPING_INPUTS = ("response_shape", "error_fields", "outcome_messages")
#: The sample answer's input: not part of the definition, never saved.
SAMPLE = "shape_sample"
TRY_SHAPE = "try-shape"
_ITEM = re.compile(r"^(error_fields|outcome_messages)\[(.*)\]$")


def shaping_from_form(form: Mapping[str, str]) -> dict[str, Any]:
    """The three fields from the editor's inputs: the shape as written, the error fields separated by commas or
    spaces, and one outcome message a line as `outcome = sentence`. A line without `=` is kept whole as an outcome
    with no sentence, so the registry names what is wrong with it."""
    shape = form.get("response_shape", "").strip() or None
    fields = [name for name in re.split(r"[\s,]+", form.get("error_fields", "")) if name]
    messages: dict[str, str] = {}
    for line in form.get("outcome_messages", "").splitlines():
        if line.strip():
            key, _, sentence = line.partition("=")
            messages[key.strip()] = sentence.strip()
    return {"response_shape": shape, "error_fields": fields or None, "outcome_messages": messages or None}


def messages_text(messages: Mapping[str, str] | None) -> str:
    """Outcome messages as the editor's input holds them: `outcome = sentence`, one a line."""
    return "\n".join(f"{key} = {sentence}" for key, sentence in (messages or {}).items())


def at_inputs(violations: Sequence[Violation], state: Mapping[str, Any]) -> list[Violation]:
    """Violations of one error field or one outcome message moved to the input that holds them all, each naming the
    item it is about."""
    moved = []
    for v in violations:
        match = _ITEM.match(v.field)
        if match is None:
            moved.append(v)
            continue
        field, inside = match[1], match[2]
        if field == "error_fields":
            names = state.get("error_fields") or []
            index = int(inside) if inside.isdigit() else -1
            item = names[index] if 0 <= index < len(names) else inside
        else:
            item = json.loads(inside) if inside.startswith('"') else inside
        moved.append(Violation(field, v.rule, f"{item}: {v.message}"))
    return moved


def try_shape(form: Mapping[str, str]) -> dict[str, Any]:
    """What *Try it* shows: the model's output and its length against the cap, or the failure it would get."""
    expression = form.get("response_shape", "").strip()
    sample = form.get(SAMPLE, "")
    if not expression:
        return {"note": "Write a response shape first: without one the model gets the answer as it came."}
    result = preview(expression, sample)
    if result.unparsable:
        return {"note": RULES["shape-unparsable"]}
    if result.output is not None:
        return {"output": result.output, "length": len(result.output), "cap": RESPONSE_CAP_CHARS}
    return {"kind": result.kind, "reason": result.reason}
