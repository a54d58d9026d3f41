"""What a re-import keeps of the tool it updates, where the document cannot say or does not.

With `update_existing`, an operation's definition becomes a new draft of an existing tool in place of its latest
published version. A person may have changed whether that tool waits for their approval, or made it require an
entitlement (which an OpenAPI document has no way to state); replacing the whole definition would quietly undo
their choice. Where the latest version's `requires_approval` differs from what this import sets for the operation,
that is the person's choice (the importer would have set its own), and it is kept; the entitlement is always kept.
Each one kept is listed on the operation (`kept`), so the preview says so. No Flask here.
"""
from __future__ import annotations

from typing import Any

from service.catalogue import Violation, violation
from service.importing.operations import Mapped
from service.registry import REGISTRATION_FIELDS
from service.registry.rules import check_definition

#: The rule that says each field was kept.
KEPT_RULES = {"required_entitlement": "entitlement-kept", "response_shape": "shaping-kept",
              "error_fields": "shaping-kept", "outcome_messages": "shaping-kept"}
#: The rule that says the person's approval choice was kept, by the value kept.
APPROVAL_KEPT = {True: "approval-kept", False: "approval-off-kept"}


def keep_existing(mapped: Mapped, existing: dict[str, Any]) -> tuple[list[Violation], list[Violation]]:
    """Carry `requires_approval` (where it differs from what the import sets: the person's choice) and
    `required_entitlement` from `existing`, the definition the new draft replaces, into the mapped registration and
    definition. Answers what was kept (each field with its rule's sentence), and the violations that refuse the
    operation instead (then nothing is kept)."""
    fields: dict[str, Any] = {}
    chosen = existing.get("requires_approval") is True
    if chosen != mapped.requires_approval and not mapped.approval_chosen:
        fields["requires_approval"] = chosen
    # Nor can a document state what the model sees of an answer (docs/shaping.md): an import itself sets none of it.
    for name in ("required_entitlement", "response_shape", "error_fields", "outcome_messages"):
        if existing.get(name):
            fields[name] = existing[name]
    if not fields or mapped.registration is None:
        return [], []
    registration = {**mapped.registration, **fields}
    definition, found = check_definition(registration, extra_fields=REGISTRATION_FIELDS)
    if found:
        return [], found
    mapped.registration, mapped.definition = registration, definition
    return [violation(name, APPROVAL_KEPT[value] if name == "requires_approval" else KEPT_RULES[name])
            for name, value in fields.items()], []
