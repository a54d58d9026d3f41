"""The bounds of one import: its refusal of the document, and the work it may do (a count of values expanded, a
deadline, and whether anyone still waits for the answer).

A document's size and values are bounded before it is walked (`document`), but mapping it follows `$ref`s and merges
`allOf` parts, and a few kilobytes of references can stand for billions of merges. Every such step spends from one
`Budget`: past its count, or past its deadline, the import is refused whole as `document-too-complex`. The request
that started the import may also give up on it (`abandon`, from the hub's thread): the work then stops at its next
step instead of running on for nobody.
"""
from __future__ import annotations

import time
from typing import Callable

from service import limits
from service.catalogue import violation
from service.errors import ServiceError

#: Steps between two readings of the clock: a step is a few microseconds, the clock a fraction of one.
_CLOCK_EVERY = 64


def refused(rule: str, field: str = "document", detail: str = "") -> ServiceError:
    """422 naming the request field that cannot be used, with the rule's sentence (and what was found, if told)."""
    v = violation(field, rule)
    message = f"{v.message} {detail}".strip() if detail else v.message
    return ServiceError(422, rule, message[: len(v.message) + 1 + limits.ERROR_DETAIL_CHARS], [v])


class Abandoned(Exception):
    """The request that asked for this import is gone: nobody will read what the work finds."""


class Budget:
    """Expansions left and the deadline of one import. `spend` is called at every step of the work; it raises
    422 `document-too-complex` past either bound, and Abandoned once the request has given up.

    The bounds are read when the budget is made, so a test can set them small.
    """

    def __init__(self, expansions: int | None = None, seconds: float | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.expansions = limits.MAX_IMPORT_DOCUMENT_VALUES if expansions is None else expansions
        self.seconds = limits.IMPORT_DEADLINE_SECONDS if seconds is None else seconds
        self.spent = 0
        self._clock = clock
        self._ends = clock() + self.seconds
        self._abandoned = False

    def spend(self, steps: int = 1) -> None:
        """Count `steps` expansions (a `$ref` followed, an `allOf` part merged, entries copied)."""
        before = self.spent
        self.spent += steps
        if self.spent > self.expansions:
            raise refused("document-too-complex")
        if before // _CLOCK_EVERY != self.spent // _CLOCK_EVERY:
            self.check()

    def check(self) -> None:
        """Raise if the request is gone or the deadline has passed (a step that spends nothing calls it too)."""
        if self._abandoned:
            raise Abandoned()
        if self.past_deadline():
            raise refused("document-too-complex")

    def past_deadline(self) -> bool:
        return self._clock() > self._ends

    def abandon(self) -> None:
        """Stop the work at its next step: called from another thread than the one doing it (a plain flag, which
        the interpreter reads and writes whole)."""
        self._abandoned = True

    @property
    def abandoned(self) -> bool:
        return self._abandoned

