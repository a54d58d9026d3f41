"""The platform suite's cases, one module per area, imported in the order they run and print in.

The failure cases come first: two of them wait out the call deadline, and begun first they wait it out
beside every other case rather than after the many cases ahead of them (a second of every run, seconds
of one that keeps the spec's ten). Key rotation changes the signing key under every other case, so it
runs alone and last (sorted among the others, it ran in the middle and split the run in two halves that
each waited for their slowest case).
"""
from conformance.platform.cases import failure  # noqa: F401  (first: see above)

# isort: split
from conformance.platform.cases import (  # noqa: F401  (each module declares its cases on SUITE)
    agent,
    approval,
    assertion,
    entitlement,
    importing,
    lifecycle,
    mcp_project,
    parallel,
    projects,
    request,
    rule,
    session_start,
    shaping,
    subject,
    turn,
    turn_approval,
)

# isort: split
from conformance.platform.cases import rotation  # noqa: F401  (last: see above)
