"""The platform suite's cases, one module per area, imported in the order they run and print in.

Key rotation changes the signing key under every other case, so it runs alone and last.
"""
from conformance.platform.cases import (  # noqa: F401  (each module declares its cases on SUITE)
    rule, lifecycle, projects, agent, request, failure, assertion, subject, entitlement, session_start, parallel,
    importing, turn, rotation,
)
