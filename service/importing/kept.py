"""What a re-import keeps of the tool it updates, where the document cannot say or does not.

With `update_existing`, an operation's definition becomes a new draft of an existing tool in place of its latest
published version. A person may have made that tool wait for their approval, or require an entitlement: an OpenAPI
document has no way to state an entitlement, and one without `x-openai-isConsequential` says nothing either way, so
replacing the whole definition would quietly loosen a consequential tool. Both are kept from the latest version
instead, and each one kept is listed on the operation (`kept`), so the preview says so. An explicit
`x-openai-isConsequential: false` does turn the approval off. No Flask here.
"""
from __future__ import annotations

from typing import Any

from service.catalogue import Violation, violation
from service.importing.operations import Mapped
from service.registry import REGISTRATION_FIELDS
from service.registry.rules import check_definition

#: The rule that says each field was kept.
KEPT_RULES = {"requires_approval": "approval-kept", "required_entitlement": "entitlement-kept"}


def keep_existing(mapped: Mapped, existing: dict[str, Any]) -> tuple[list[Violation], list[Violation]]:
    """Carry `requires_approval` (unless the operation states it) and `required_entitlement` from `existing`, the
    definition the new draft replaces, into the mapped registration and definition. Answers what was kept (each
    field with its rule's sentence), and the violations that refuse the operation instead (then nothing is kept)."""
    fields: dict[str, Any] = {}
    if existing.get("requires_approval") is True and not mapped.states_approval:
        fields["requires_approval"] = True
    if existing.get("required_entitlement"):
        fields["required_entitlement"] = existing["required_entitlement"]
    if not fields or mapped.registration is None:
        return [], []
    registration = {**mapped.registration, **fields}
    definition, found = check_definition(registration, extra_fields=REGISTRATION_FIELDS)
    if found:
        return [], found
    mapped.registration, mapped.definition = registration, definition
    return [violation(name, KEPT_RULES[name]) for name in fields], []
