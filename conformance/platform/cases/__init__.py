"""The platform suite's cases, one module per area, imported in the order they run and print in.

Key rotation changes the signing key under every other case, so it runs alone and last: it is imported
on its own, after the others (sorted among them, it ran in the middle, and split the run in two halves
that each waited for their slowest case).
"""
from conformance.platform.cases import (  # noqa: F401  (each module declares its cases on SUITE)
    agent,
    assertion,
    entitlement,
    failure,
    importing,
    lifecycle,
    parallel,
    projects,
    request,
    rule,
    session_start,
    subject,
    turn,
)

# isort: split
from conformance.platform.cases import rotation  # noqa: F401  (last: see above)
