"""What the broken doubles know and share: what was registered and pinned, and the double's key."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from conformance.tokens import SigningKey

#: The call deadline of the platform these tests start, given to it and to the kit (`--call-deadline-seconds`):
#: the spec's ten would cost every run that waits on it ten seconds. `failure/answered-in-time` calls for the
#: deadline less the kit's `IN_TIME_MARGIN_SECONDS`, which `hold-slow` holds; the suite's one shorter delay
#: (`SLOW_FIRST_CALL_SECONDS`, in `parallel/results-in-order`) must stay below that, and an ordinary call, on a
#: loaded machine, far below the deadline itself. The tests of the slow cases wait it out on top of their setup, and
#: stay under three seconds with it.
DEADLINE_SECONDS = 2.0


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
    #: Each call held for approval that a step answered through the front double, by its approval's id: the
    #: tool, the conversation and the Authorization header of the step.
    held: dict[str, tuple[Any, str, str]] = field(default_factory=dict)

    def required_entitlements(self) -> set[str]:
        """Every entitlement any registered tool requires."""
        return {d["required_entitlement"] for d in self.definitions.values() if d.get("required_entitlement")}

    def reset_faults(self) -> None:
        """Forget what one mode's faults left behind, so the next mode starts clean."""
        self.model_subjects.clear()
        self.retired_kids.clear()
