"""Cases and verdicts: what a conformance case is, and what its check answers.

A case is declared once, with a stable kebab id under an area (`assertion/expired-rejected`), a
title, the requirement sentence it checks and the spec passage that sentence comes from. Its
check takes the suite's target (whatever the suite runs against: an endpoint, a platform) and
returns a `Verdict`. A check reports every violation it finds, not the first, each as expected
against actual; `Check` collects them. The runner turns an exception inside a check into an
errored verdict, so one broken check never stops a run.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Callable, Iterable, Iterator

from conformance.limits import CASE_BUDGET_SECONDS

#: An area path and a name, each in kebab case: `endpoint/valid-call-accepted`, `rule/x/y`.
CASE_ID = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*(?:/[a-z0-9]+(?:-[a-z0-9]+)*)+$")


class Outcome(str, Enum):
    """How a case ended. Errored means the check itself could not finish, not that it failed."""

    PASSED = "passed"
    FAILED = "failed"
    ERRORED = "errored"
    #: The requirement does not apply to this target (a shared tool has no subject to bind); the
    #: verdict's `error` says why. Counted apart: neither a pass nor a failure.
    SKIPPED = "skipped"


@dataclass(frozen=True)
class Violation:
    """One way the target broke the requirement: what was looked at, expected, actual."""

    what: str
    expected: str
    actual: str

    def to_dict(self) -> dict[str, str]:
        """As plain data, for the JSON report."""
        return {"what": self.what, "expected": self.expected, "actual": self.actual}


@dataclass(frozen=True)
class Verdict:
    """What a check answers. Build one with `passed`, `failed`, `errored`, `skipped` or a `Check`.

    `hints` name a likely cause of a failure when the check can tell one ("the endpoint never
    fetched this run's key set"): the report prints them under the violations.
    """

    outcome: Outcome
    violations: tuple[Violation, ...] = ()
    error: str | None = None
    hints: tuple[str, ...] = ()

    @classmethod
    def passed(cls) -> Verdict:
        """The requirement holds."""
        return cls(Outcome.PASSED)

    @classmethod
    def failed(cls, violations: Iterable[Violation], hints: Iterable[str] = ()) -> Verdict:
        """A failure must say why: at least one violation."""
        found = tuple(violations)
        if not found:
            raise ValueError("a failed verdict needs at least one violation")
        return cls(Outcome.FAILED, found, hints=tuple(hints))

    @classmethod
    def errored(cls, error: str) -> Verdict:
        """The check could not finish; `error` says why (an exception's type and text)."""
        return cls(Outcome.ERRORED, error=error)

    @classmethod
    def skipped(cls, why: str) -> Verdict:
        """The requirement does not apply to this target; `why` says so in a sentence."""
        return cls(Outcome.SKIPPED, error=why)


class Check:
    """Collects every violation of one case, so its verdict reports them all.

        check = Check()
        check.expect(answer.status == 200, "status", 200, answer.status)
        check.expect(answer.chars <= RESPONSE_CAP_CHARS, "body length", ..., answer.chars)
        return check.verdict()
    """

    def __init__(self) -> None:
        self._violations: list[Violation] = []
        self._hints: list[str] = []

    def expect(self, ok: bool, what: str, expected: Any, actual: Any) -> bool:
        """Record a violation unless `ok`; answer `ok` so a check can skip what depends on it."""
        if not ok:
            self._violations.append(Violation(what, str(expected), str(actual)))
        return ok

    def equal(self, what: str, expected: Any, actual: Any) -> bool:
        """Record a violation unless `actual == expected`."""
        return self.expect(actual == expected, what, expected, actual)

    def fail(self, what: str, expected: Any, actual: Any) -> None:
        """Record a violation unconditionally."""
        self.expect(False, what, expected, actual)

    def hint(self, text: str) -> None:
        """Name a likely cause, printed with the violations if there are any (ignored otherwise)."""
        self._hints.append(text)

    @property
    def violations(self) -> tuple[Violation, ...]:
        """Everything recorded so far, in order."""
        return tuple(self._violations)

    def verdict(self) -> Verdict:
        """Passed if nothing was recorded, otherwise failed with everything that was."""
        if self._violations:
            return Verdict.failed(self._violations, self._hints)
        return Verdict.passed()


@dataclass(frozen=True)
class SpecRef:
    """Where a requirement comes from: a file of the spec and a phrase quoted from it verbatim."""

    file: str
    quote: str

    def __str__(self) -> str:
        return f'{self.file}: "{self.quote}"'


#: A check takes the suite's target and answers a verdict.
CheckFunction = Callable[[Any], Verdict]


@dataclass(frozen=True)
class Case:
    """One requirement the kit checks, declared once.

    `exclusive` cases run alone (nothing else in flight), for checks that time or count what
    the target does; every other case may run alongside its neighbours.
    """

    id: str
    title: str
    requirement: str
    spec: tuple[SpecRef, ...]
    check: CheckFunction = field(compare=False, repr=False)
    exclusive: bool = False
    budget_seconds: float = CASE_BUDGET_SECONDS

    def __post_init__(self) -> None:
        if not CASE_ID.match(self.id):
            raise ValueError(f"case id {self.id!r} is not area/kebab-name")
        if not self.spec:
            raise ValueError(f"case {self.id} names no spec passage")
        if not self.title or not self.requirement:
            raise ValueError(f"case {self.id} needs a title and a requirement")

    @property
    def area(self) -> str:
        """Everything before the last slash: `assertion` for `assertion/expired-rejected`."""
        return self.id.rsplit("/", 1)[0]


class Suite:
    """The cases of one suite, in declaration order, ids unique.

    Declare a case with the decorator, or build many from data with `add`:

        @SUITE.case("endpoint/valid-call-accepted", title=..., requirement=..., spec=...)
        def valid_call_accepted(target): ...

        for vector in VECTORS:
            SUITE.add(Case(vector.id, ..., check=functools.partial(check_vector, vector)))
    """

    def __init__(self, name: str) -> None:
        self.name = name
        self._cases: dict[str, Case] = {}

    def add(self, case: Case) -> Case:
        """Add one case; a second case with the same id is a programming error."""
        if case.id in self._cases:
            raise ValueError(f"case {case.id} is declared twice")
        self._cases[case.id] = case
        return case

    def case(
        self,
        id: str,
        *,
        title: str,
        requirement: str,
        spec: SpecRef | Iterable[SpecRef],
        exclusive: bool = False,
        budget_seconds: float = CASE_BUDGET_SECONDS,
    ) -> Callable[[CheckFunction], CheckFunction]:
        """Decorator declaring the decorated function as the check of a new case."""
        refs = (spec,) if isinstance(spec, SpecRef) else tuple(spec)

        def declare(check: CheckFunction) -> CheckFunction:
            self.add(Case(id, title, requirement, refs, check, exclusive, budget_seconds))
            return check

        return declare

    @property
    def cases(self) -> list[Case]:
        """The cases in declaration order."""
        return list(self._cases.values())

    def __iter__(self) -> Iterator[Case]:
        return iter(self.cases)

    def __len__(self) -> int:
        return len(self._cases)
