"""The deliberately broken platforms, and the cases each must fail.

A mode switches faults on in the doubles (`front`: in front of the platform; `back`: between
platform and mock; `model`: between platform and the scripted model). There is one mode per
platform area, breaking every promise of that area at once (patterns aim a fault at the tools of the case meant to catch it), and a few that break one
promise, everywhere as a real bug would or aimed at the one case that checks it. Each mode names exactly the cases that must fail; every
other selected case must pass.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from conformance.platform import SUITE

ALL = [case.id for case in SUITE]

#: Cases that wait on the call deadline or a key-cache cooldown: only modes that target them run them.
SLOW = frozenset({"failure/timed-out", "failure/answered-in-time", "assertion/key-rotation"})


def area(name: str) -> frozenset[str]:
    """Every case id of an area."""
    return frozenset(i for i in ALL if i.startswith(name + "/"))


VALID_RULES = frozenset(i for i in area("rule") if i.startswith("rule/valid-"))
ERROR_RESULTS = frozenset({"failure/refused", "failure/returned-nothing", "failure/response-too-big",
                           "failure/transport-error", "failure/unknown-tool", "failure/invalid-arguments",
                           "failure/redirect-not-followed",
                           # outside the area, the cases that expect an error result too:
                           "request/path-value-one-segment", "entitlement/unentitled-not-callable",
                           "session-start/runs-once",
                           "shaping/response-shape", "shaping/shape-failed", "shaping/error-fields",
                           "shaping/outcome-messages"})


@dataclass(frozen=True)
class Mode:
    """One broken platform: the faults switched on in each double, and the cases that must fail."""

    name: str
    breaks: frozenset[str]
    front: dict[str, Any] = field(default_factory=dict)
    back: dict[str, Any] = field(default_factory=dict)
    model: dict[str, Any] = field(default_factory=dict)

    @property
    def selected(self) -> list[str]:
        """The cases this mode runs: every case of the areas it breaks (all of them, for a mode that breaks
        nothing), but the slow ones it does not target. Whether its faults reach other areas is asked once per
        area, for every mode at once (`aimed_elsewhere`): each mode running the whole suite cost more than the
        rest of the tests together."""
        areas = {case_id.split("/")[0] for case_id in self.breaks}
        return [i for i in ALL if (not areas or i.split("/")[0] in areas) and (i not in SLOW or i in self.breaks)]


def _merged(a: Any, b: Any) -> Any:
    """Two modes' settings of one fault, both on: `True` (every tool) covers a pattern, two patterns match
    either, two maps (tamperings) are joined."""
    if a is True or b is True:
        return True
    if isinstance(a, str) and isinstance(b, str):
        return a if a == b else f"(?:{a})|(?:{b})"
    if isinstance(a, dict) and isinstance(b, dict):
        return {**a, **b}
    if a == b:
        return a
    raise ValueError(f"two modes set one fault differently: {a!r} and {b!r}")


def aimed_elsewhere(area_name: str) -> Mode:
    """One platform broken in every way of every mode that breaks no case of `area_name`, at once: each of those
    modes claims its faults reach none of that area's cases, so all of them must pass."""
    front: dict[str, Any] = {}
    back: dict[str, Any] = {}
    model: dict[str, Any] = {}
    for mode in MODES:
        if mode.breaks & area(area_name):
            continue
        for faults, into in ((mode.front, front), (mode.back, back), (mode.model, model)):
            for name, setting in faults.items():
                into[name] = _merged(into[name], setting) if name in into else setting
    return Mode(f"aimed-elsewhere-{area_name}", frozenset(), front, back, model)


# No mode of no faults: every case but the slow ones passes per area with the doubles in front and every fault aimed
# elsewhere switched on (`aimed_elsewhere`), which already shows the doubles alone break nothing.
MODES = [
    Mode("rule", area("rule"), front={"reword": True, "drop-extra": True, "refuse-named": "_rule_valid_"}),
    Mode("reworded-messages", area("rule") - VALID_RULES, front={"reword": True}),
    Mode("lifecycle", area("lifecycle"), front={
        "register-publishes": "_lifecycle_register$", "save-publishes": "_lifecycle_save$",
        "version-follows-draft": "_lifecycle_publish$", "fake-published-write": True, "new-draft-blank": True,
        "rename-allowed": True, "label-frozen": True, "no-draft-conversations": True,
        "cascade-pins-draft": True, "agent-publishes": "lifecycle.agent", "mcp-offers-publish": True,
        "publish-keeps-pins": True,
    }, back={"rewrite-path": ("/echo/v1", "/echo/v3")}),
    Mode("request", area("request"), back={"mangle-request": "_request_"}),
    Mode("failure", area("failure") | (ERROR_RESULTS - area("failure")),
         front={"swap-kinds": True, "empty-is-failure": True, "cap-off-by-one": True},
         back={"hold-slow": True}),
    Mode("error-bodies", ERROR_RESULTS | {"session-start/failure-summary"},
         front={"error-bodies": True, "context-error-body": True}),
    Mode("shaping", area("shaping"), front={"shaping-ignored": "_shaping_"}),
    Mode("subject", area("subject"), front={"subject-offered": True},
         back={"model-subject": True, "wrong-subject": "_subject_(filled|query|body)$"}),
    Mode("entitlement", area("entitlement"), front={
        "offer-unentitled": True, "steps-ignore-entitlements": True, "hide-from-anonymous": True}),
    Mode("session-start", area("session-start"), front={
        "context-unlabelled": True, "session-start-offered": True, "opens-ignore-entitlements": True,
        "context-error-body": True,
    }, back={"tamper": {"_session_signed$": "sub"}, "sequential": "_session_parallel_"}),
    Mode("mcp-project", area("mcp-project"), front={
        "mcp-challenge-without-metadata": True, "mcp-project-subject-offered": True,
        "mcp-project-error-bodies": True, "mcp-project-held-as-error": True}),
    Mode("parallel", area("parallel"), front={"shuffle-results": True},
         back={"sequential": "_parallel_overlap_"}),
    Mode("sequential-calls", frozenset({"parallel/calls-overlap", "session-start/in-parallel",
                                        "turn/step-calls-parallel"}),
         back={"sequential": True}),
    Mode("import", area("import"), front={
        "import-preview-writes": True, "import-ignores-subject": True, "import-reads-anything": True,
        "import-silences": True, "import-publishes": True, "import-approves-only-marked": True}),
    Mode("approval", area("approval"), front={
        "send-at-once": "_approval_held$", "decline-approves": "_approval_declined$",
        "decisions-succeed": "_approval_(replay|expired)$", "decide-anywhere": "_approval_other_(subject|conversation)$",
    }, back={"tamper": {"_approval_approved$": "no-approval"}}),
    Mode("turn", area("turn"), back={"sequential": "_turn_parallel_"}, model={
        "context-unmarked": True, "model-sees-subject": True, "model-sees-error-body": True,
        "output-reshaped": True}),
    # A turn paused for approval: answered as if it had ended, or continued without the decided result.
    Mode("pause-unreported", frozenset({"turn/awaits-approval"}), front={"pause-unreported": "_turn_approval$"}),
    Mode("decided-withheld", frozenset({"turn/awaits-approval"}), model={"decided-withheld": "_turn_approval$"}),
    # Last: it rotates the organization's key, and waits on the mock's key-cache cooldown.
    Mode("assertion", area("assertion"), front={"jwks-uncacheable": True, "jwks-drops-old-key": True}, back={
        "add-cookie": "_assertion_forwarded_",
        "tamper": {"_assertion_signed_": "unsigned", "_assertion_issuer_": "iss",
                   "_assertion_audience_": "aud-list", "_assertion_sub_": "sub", "_assertion_anon_": "anon",
                   "_assertion_turn_": "turn", "_assertion_expiry_": "exp", "_assertion_claims_": "jti"},
    }),
]

#: The areas of the suite, in order.
AREAS = list(dict.fromkeys(case_id.split("/")[0] for case_id in ALL))
