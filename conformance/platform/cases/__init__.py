"""The platform suite's cases, one module per area, imported in the order they run and print in.

Key rotation changes the signing key under every other case, so it runs alone and last.
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
    rotation,
    rule,
    session_start,
    subject,
    turn,
)
