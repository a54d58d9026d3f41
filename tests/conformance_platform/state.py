"""What the broken doubles know and share: what was registered and pinned, and the double's key."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from conformance.tokens import SigningKey

#: The call deadline of the platform these tests start, given to it and to the kit (`--call-deadline-seconds`):
#: the spec's ten would cost every run that waits on it ten seconds. Above 3, so `hold-slow` (which holds calls of
#: half the deadline or more) catches a call answering in time (1.5 s before it) yet lets pass the parallel cases'
#: calls of 1.5 s.
DEADLINE_SECONDS = 4.0


@dataclass
class Shared:
    """Recorded by the front double as requests pass; read by both doubles' faults."""

    #: The double's own signing key: published beside the organization's, so a tampered
    #: assertion re-signed with it still verifies and only the tampered claim is wrong.
    double_key: SigningKey = field(default_factory=SigningKey.generate)
    definitions: dict[str, dict[str, Any]] = field(default_factory=dict)
    pins: dict[str, list[str]] = field(default_factory=dict)
    conversations: dict[str, str] = field(default_factory=dict)
    #: The last subject the model supplied in a call to each tool.
    model_subjects: dict[str, Any] = field(default_factory=dict)
    #: Keys the front double leaves out of the key set (after a rotation, with `jwks-drops-old-key`).
    retired_kids: set[str] = field(default_factory=set)

    def required_entitlements(self) -> set[str]:
        """Every entitlement any registered tool requires."""
        return {d["required_entitlement"] for d in self.definitions.values() if d.get("required_entitlement")}

    def reset_faults(self) -> None:
        """Forget what one mode's faults left behind, so the next mode starts clean."""
        self.model_subjects.clear()
        self.retired_kids.clear()
