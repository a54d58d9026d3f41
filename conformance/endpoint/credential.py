"""The assertion as the credential it is: never echoed to the model, and, where the tool asks it, taken once.

Whatever an endpoint answers with a 2xx goes to the model word for word (how-tools-run). The assertion in the
`Authorization` header is a live bearer credential for this endpoint, so an answer quoting it, or any of its three
dot-separated parts, hands it to a context a crafted message can steer. And an approved assertion, captured, could be
sent again within its thirty seconds to repeat a consequential call (a second refund): a backend of such a tool takes
each `jti` once (docs/approvals.md), which `--single-use` checks.
"""
from __future__ import annotations

from conformance.case import Case, Check, SpecRef, Verdict
from conformance.endpoint.approval import APPROVALS
from conformance.endpoint.forgeries import HOW_TOOLS_RUN, REFUSALS, nothing_accepted
from conformance.endpoint.target import EndpointTarget

PARTS = ("header", "payload", "signature")


def check_no_credential_echoed(target: EndpointTarget) -> Verdict:
    """The correct call's 2xx body holds neither its assertion nor any of the assertion's parts."""
    unproven = nothing_accepted(target)
    if unproven is not None:
        return unproven
    body, token = target.valid_answer().body, target.valid_token()
    check = Check()
    for what, text in (("the assertion", token), *zip((f"its {part}" for part in PARTS), token.split("."))):
        at = body.find(text)
        check.expect(at < 0, f"{what} in the correct call's 2xx body, which goes to the model word for word",
                     "absent", f"found at character {at}")
    if check.violations:
        check.hint("the endpoint echoes its Authorization header, or the token in it, in a successful answer (a "
                   "debugging echo of the request's headers?): leave credentials out of every body")
    return check.verdict()


def check_replay_rejected(target: EndpointTarget) -> Verdict:
    """One correct assertion sent twice: the first accepted, the second refused with 401 or 403."""
    if not target.single_use:
        return Verdict.skipped("the kit was not told the endpoint takes each assertion once; say --single-use if it "
                               "does (recommended for a consequential tool)")
    token = target.issuer.key.sign(target.claims())
    check = Check()
    first = target.send(token)
    if not check.expect(first.accepted, "answer to a correct assertion, sent the first time", "2xx", first.describe()):
        return check.verdict()
    again = target.send(token)
    check.expect(again.status in REFUSALS, "answer to that same assertion sent again (its jti already taken)",
                 " or ".join(map(str, REFUSALS)), again.describe())
    return check.verdict()


NO_CREDENTIAL_ECHOED = Case(
    id="endpoint/no-credential-echoed",
    title="A successful answer does not echo the assertion",
    requirement="An endpoint's 2xx answer to a correct call holds neither the assertion it carried nor any of the "
                "assertion's three dot-separated parts (header, payload, signature).",
    spec=(SpecRef(HOW_TOOLS_RUN, "When your endpoint answers successfully, the platform passes the response as-is "
                                 "back to the model to continue the turn."),
          SpecRef(HOW_TOOLS_RUN, "a JSON Web Token sent as a standard Authorization: Bearer token")),
    check=check_no_credential_echoed,
)

REPLAY_REJECTED = Case(
    id="endpoint/replay-rejected",
    title="An assertion sent a second time is refused, for an endpoint taking each once",
    requirement="With --single-use, an endpoint accepts a correct assertion once and refuses it, with 401 or 403, "
                "when the same assertion (the same jti) comes again.",
    spec=(SpecRef(APPROVALS, "remember its `jti` until its `exp` has passed, and refuse it if it comes again"),),
    check=check_replay_rejected,
)
