"""What changed between two definitions of a tool, and which changes break the model or the endpoint.

Plain functions over the definitions' stored form (`ToolDefinition.to_dict()`), no database. A change breaks the
model when calls it makes from what it was told would now fail or mean something else; it breaks the endpoint when
the request it receives takes another shape. Parameters are matched by name; a parameter removed and one added with
the same type (and element type) are reported as one renamed, since that is what an edit in the editor looks like,
with any move or change of `required` reported on top.
"""
from __future__ import annotations

import difflib
import json
from dataclasses import dataclass
from typing import Any

from service.definition import SUBJECT

MODEL, ENDPOINT = "model", "endpoint"

# kind: (who it breaks, the sentence shown). An empty tuple means the change is safe to publish.
KINDS: dict[str, tuple[tuple[str, ...], str]] = {
    "parameter-removed": ((MODEL, ENDPOINT), "The parameter {parameter} was removed."),
    "parameter-renamed": ((MODEL, ENDPOINT), "The parameter {before} was renamed to {after}."),
    "parameter-retyped": ((MODEL, ENDPOINT), "The parameter {parameter} changed type from {before} to {after}."),
    "parameter-made-required": ((MODEL,), "The parameter {parameter} is now required."),
    "required-parameter-added": ((MODEL,), "A required parameter {parameter} was added."),
    "parameter-moved": ((ENDPOINT,), "The parameter {parameter} moved from the {before} to the {after}."),
    "method-changed": ((ENDPOINT,), "The method changed from {before} to {after}."),
    "url-changed": ((ENDPOINT,), "The URL changed from {before} to {after}."),
    "scope-changed": ((ENDPOINT,), "The scope changed from {before} to {after}."),
    "session-start-changed": ((MODEL,), "The tool {after}."),
    "approval-changed": ((MODEL, ENDPOINT), "The tool {after}."),
    # What the model sees of an answer (docs/shaping.md): the same call now reads differently to it.
    "shape-changed": ((MODEL,), "What the model gets of a successful answer changed: its response shape was "
                                "{before} and is now {after}."),
    "error-fields-changed": ((MODEL,), "The fields of an error the model may read changed from {before} to {after}."),
    "outcome-messages-changed": ((MODEL,), "The sentences the model gets for the tool's outcomes changed."),
    "parameter-added": ((), "An optional parameter {parameter} was added."),
    "parameter-made-optional": ((), "The parameter {parameter} is now optional."),
    "parameter-description-changed": ((), "The description of the parameter {parameter} changed."),
    "description-changed": ((), "The description the model reads changed."),
    "entitlement-changed": ((), "The required entitlement changed from {before} to {after}."),
}

APPROVAL_WORDS = {True: "now waits for the person's approval before each call is sent",
                  False: "no longer waits for the person's approval"}
LOCATION_NAMES = {"query": "query string", "path": "URL path", "body": "request body"}


@dataclass(frozen=True)
class Change:
    """One difference between two definitions."""

    kind: str
    parameter: str | None = None
    before: Any = None
    after: Any = None

    @property
    def affects(self) -> tuple[str, ...]:
        """Who this change breaks. The model never sees the subject, so changes to it never break the model."""
        affected = KINDS[self.kind][0]
        if self.parameter == SUBJECT:
            affected = tuple(a for a in affected if a != MODEL)
        return affected

    @property
    def breaking(self) -> bool:
        return bool(self.affects)

    @property
    def message(self) -> str:
        if self.kind == "approval-changed":
            return KINDS[self.kind][1].format(after=APPROVAL_WORDS[bool(self.after)])
        words = LOCATION_NAMES if self.kind == "parameter-moved" else {}
        return KINDS[self.kind][1].format(parameter=self.parameter, before=_words(self.before, words),
                                          after=_words(self.after, words))

    def to_dict(self) -> dict[str, Any]:
        return {"change": self.kind, "parameter": self.parameter, "before": self.before, "after": self.after,
                "breaking": self.breaking, "affects": list(self.affects), "message": self.message}


def _words(value: Any, names: dict[str, str]) -> str:
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "runs at session start" if value else "no longer runs at session start"
    if isinstance(value, list):
        return ", ".join(value) or "none"
    return names.get(value, str(value))


def _type(parameter: dict[str, Any]) -> str:
    element = parameter.get("element_type")
    return f"array of {element}" if parameter["type"] == "array" and element else parameter["type"]


def _shape(parameter: dict[str, Any]) -> tuple[str, str]:
    return _type(parameter), parameter["location"]


def compare(before: dict[str, Any], after: dict[str, Any]) -> list[Change]:
    """Every change from `before` to `after`, in a stable order: the tool's own fields, then each parameter."""
    changes: list[Change] = []
    for field, kind in (("method", "method-changed"), ("url", "url-changed"), ("scope", "scope-changed"),
                        ("runs_at_session_start", "session-start-changed"),
                        ("required_entitlement", "entitlement-changed")):
        if before.get(field) != after.get(field):
            changes.append(Change(kind, before=before.get(field), after=after.get(field)))
    # A definition stored before the flag existed does not require approval.
    was, now = bool(before.get("requires_approval", False)), bool(after.get("requires_approval", False))
    if was != now:
        changes.append(Change("approval-changed", before=was, after=now))
    if before.get("description") != after.get("description"):
        changes.append(Change("description-changed"))
    # Absent, null and empty all mean the spec's behaviour (a definition stored before issue 39 has none).
    for field, kind in (("response_shape", "shape-changed"), ("error_fields", "error-fields-changed")):
        if (before.get(field) or None) != (after.get(field) or None):
            changes.append(Change(kind, before=before.get(field) or None, after=after.get(field) or None))
    if (before.get("outcome_messages") or {}) != (after.get("outcome_messages") or {}):
        changes.append(Change("outcome-messages-changed"))
    old = {p["name"]: p for p in before.get("parameters", [])}
    new = {p["name"]: p for p in after.get("parameters", [])}
    removed = [name for name in old if name not in new]
    added = [name for name in new if name not in old]
    pairs: list[tuple[str, str]] = []
    for name in list(removed):
        # The same type and place is the likeliest rename; failing that, the same type anywhere.
        candidates = [a for a in added if _type(new[a]) == _type(old[name]) and SUBJECT not in (a, name)]
        match = next((a for a in candidates if _shape(new[a]) == _shape(old[name])), next(iter(candidates), None))
        if match is not None:
            pairs.append((name, match))
            removed.remove(name)
            added.remove(match)
    changes.extend(Change("parameter-removed", name) for name in removed)
    for old_name, new_name in pairs:
        changes.append(Change("parameter-renamed", new_name, before=old_name, after=new_name))
        changes.extend(_parameter_changes(new_name, old[old_name], new[new_name]))
    for name in added:
        changes.append(Change("required-parameter-added" if new[name].get("required", True) else "parameter-added",
                              name))
    for name in old:
        if name in new:
            changes.extend(_parameter_changes(name, old[name], new[name]))
    return changes


def _parameter_changes(name: str, old: dict[str, Any], new: dict[str, Any]) -> list[Change]:
    found = []
    if _type(old) != _type(new):
        found.append(Change("parameter-retyped", name, before=_type(old), after=_type(new)))
    if old["location"] != new["location"]:
        found.append(Change("parameter-moved", name, before=old["location"], after=new["location"]))
    was, now = old.get("required", True), new.get("required", True)
    if was != now:
        found.append(Change("parameter-made-required" if now else "parameter-made-optional", name))
    if (old.get("description") or "") != (new.get("description") or ""):
        found.append(Change("parameter-description-changed", name))
    return found


def text_diff(before: dict[str, Any] | None, after: dict[str, Any] | None, before_label: str,
              after_label: str) -> str:
    """A unified diff of the two definitions as indented JSON, for reading line by line."""
    def lines(definition):
        return [] if definition is None else json.dumps(definition, indent=2, sort_keys=True).splitlines()

    return "\n".join(difflib.unified_diff(lines(before), lines(after), before_label, after_label, lineterm=""))
