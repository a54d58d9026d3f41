"""`endpoint/no-approval-rejected`: a backend refuses a consequential call that the person did not approve.

A tool can require the person's approval of each call (docs/approvals.md); the platform sends such a call only once
the person approves it, and its assertion then carries an `approval` claim, the approval's id. A backend told the
tool requires approval (`--requires-approval`) must refuse a correctly signed call without that claim: otherwise a
platform, or anyone holding one of its assertions for this tool, could act for the person without asking. The case
also requires the backend to accept a correct call that does carry the claim, so a backend refusing everything
fails it rather than passing.
"""
from __future__ import annotations

from typing import Any

from conformance.case import Case, Check, SpecRef, Verdict
from conformance.endpoint.forgeries import REFUSALS, Attempt
from conformance.endpoint.target import EndpointTarget
from conformance.tokens import APPROVAL_CLAIM

#: What the platform promises beyond the spec about calls that wait for the person's approval.
APPROVALS = "docs/approvals.md"


def _unapproved(target: EndpointTarget) -> list[Attempt]:
    """Correct calls but for the approval: none at all, an empty one, a null one."""
    def signed(approval: Any, drop: bool = False) -> str:
        claims = target.claims()
        if drop:
            del claims[APPROVAL_CLAIM]
        else:
            claims[APPROVAL_CLAIM] = approval
        return target.issuer.key.sign(claims)

    return [Attempt("an assertion with no approval claim", signed(None, drop=True)),
            Attempt("an assertion whose approval claim is empty", signed("")),
            Attempt("an assertion whose approval claim is null", signed(None))]


def no_approval_rejected(target: EndpointTarget) -> Verdict:
    """A call with an approval claim accepted, every call without one refused with 401 or 403."""
    if not target.requires_approval:
        return Verdict.skipped("the tool does not require the person's approval; say --requires-approval if it "
                               "does")
    check = Check()
    approved = target.valid_answer()  # a correct call carries an approval claim when the tool requires one
    if not check.expect(approved.accepted, "answer to a correct call carrying an approval claim", "2xx",
                        approved.describe()):
        return check.verdict()
    for attempt in _unapproved(target):
        answer = target.send(attempt.token)
        check.expect(answer.status in REFUSALS, f"answer to {attempt.label}", " or ".join(map(str, REFUSALS)),
                     answer.describe())
    return check.verdict()


NO_APPROVAL_REJECTED = Case(
    id="endpoint/no-approval-rejected",
    title="A call the person did not approve is refused, for a tool that requires approval",
    requirement="For a tool that requires the person's approval (--requires-approval), an endpoint accepts a "
                "correct call whose assertion carries an approval claim, and refuses with 401 or 403 one whose "
                "assertion has none, or an empty or null one.",
    spec=(SpecRef(APPROVALS, "So your backend can refuse a consequential call whose assertion has no `approval` "
                             "claim, and the model cannot approve in the person's place."),
          SpecRef(APPROVALS, "The assertion of an approved call carries, beside the usual claims, `approval`: the "
                             "approval's id.")),
    check=no_approval_rejected,
)
