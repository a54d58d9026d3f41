"""A fair share of one instance: how many tool calls each organization may have in flight at once.

Waiting on a slow tool costs the platform almost nothing but a socket, so an instance carries thousands of calls;
the bound is there so that one organization's slow tools cannot take every one of them. Past its share a step is
refused whole (429 with Retry-After), before anything is called, and other organizations are unaffected.
"""
from __future__ import annotations

from collections import Counter
from contextlib import contextmanager
from typing import Iterator

from service.errors import too_many_calls
from service.limits import TOO_MANY_CALLS_RETRY_AFTER_SECONDS


class CallSlots:
    """Calls in flight per organization in this process, each organization held to `limit`."""

    def __init__(self, limit: int) -> None:
        if limit < 1:
            raise ValueError("an organization needs at least one call slot")
        self.limit = limit
        self._in_flight: Counter[int] = Counter()

    @contextmanager
    def held(self, organization_id: int, count: int) -> Iterator[None]:
        """Hold `count` slots for the organization while the block runs, or refuse with 429 if they do not fit.

        The check and the take happen without yielding to another greenlet, so two steps cannot both squeeze in.
        """
        if count and self._in_flight[organization_id] + count > self.limit:
            raise too_many_calls(self.limit, TOO_MANY_CALLS_RETRY_AFTER_SECONDS)
        self._in_flight[organization_id] += count
        try:
            yield
        finally:
            self._in_flight[organization_id] -= count
            if self._in_flight[organization_id] <= 0:
                del self._in_flight[organization_id]
