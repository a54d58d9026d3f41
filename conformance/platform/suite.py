"""The platform suite's one `Suite`, and where its requirements come from.

Each module of `conformance/platform/cases/` declares its area's cases on `SUITE`; the order the
package imports them in is the order they run and print in.
"""
from __future__ import annotations

from conformance.case import SpecRef, Suite

SUITE = Suite("platform")

DEFINING = "spec/defining-a-tool.txt"
HOW_TOOLS_RUN = "spec/how-tools-run.txt"
CONTRACT = "CONTRACT.md"
THREATS = "THREATS.md"
#: What the platform promises beyond the spec, about calls that wait for the person's approval (issue 19).
APPROVALS = "docs/approvals.md"


def defining(quote: str) -> SpecRef:
    """A passage of spec/defining-a-tool.txt, quoted verbatim."""
    return SpecRef(DEFINING, quote)


def running(quote: str) -> SpecRef:
    """A passage of spec/how-tools-run.txt, quoted verbatim."""
    return SpecRef(HOW_TOOLS_RUN, quote)


def contract(quote: str) -> SpecRef:
    """A passage of CONTRACT.md, for the shapes the spec leaves to the contract."""
    return SpecRef(CONTRACT, quote)


def threats(quote: str) -> SpecRef:
    """A passage of THREATS.md."""
    return SpecRef(THREATS, quote)


def approvals(quote: str) -> SpecRef:
    """A passage of docs/approvals.md: what the platform promises about calls that wait for the person's approval,
    beyond the spec."""
    return SpecRef(APPROVALS, quote)
