"""Selecting cases and running them against a target.

Cases run in a bounded gevent pool, independent ones side by side, and come back in declaration
order whatever order they finish in. The run is only parallel when the process is gevent-patched
(`python -m conformance` is; see __main__.py); unpatched, the same code runs one case at a time.
"""
from __future__ import annotations

import functools
import time
from dataclasses import dataclass
from typing import Any, Iterable, Iterator, Sequence

import gevent
from gevent.pool import Pool

from conformance.case import Case, Verdict
from conformance.limits import DEFAULT_JOBS

EXIT_PASSED = 0
EXIT_FAILED = 1
EXIT_COULD_NOT_RUN = 2


class CouldNotRun(Exception):
    """The suite cannot run at all: bad arguments, an unreachable target, nothing selected."""


@dataclass(frozen=True)
class Selection:
    """Which cases to run: ids starting with any `--case` prefix or lying in any `--area`, less
    those starting with any `--skip` prefix.

    No `--case` or `--area` selects everything. An area matches whole path segments, so `--area
    assert` does not select `assertion/…`; a case or skip prefix is a plain prefix of the id.
    """

    case_prefixes: tuple[str, ...] = ()
    areas: tuple[str, ...] = ()
    skip_prefixes: tuple[str, ...] = ()

    def matches(self, case: Case) -> bool:
        """Whether this selection takes `case`."""
        if any(case.id.startswith(prefix) for prefix in self.skip_prefixes):
            return False
        if not self.case_prefixes and not self.areas:
            return True
        if any(case.id.startswith(prefix) for prefix in self.case_prefixes):
            return True
        return any(case.id.startswith(area.strip("/") + "/") for area in self.areas)

    def describe(self) -> str:
        """The selection as it was given on the command line, for messages."""
        given = [f"--case {p}" for p in self.case_prefixes] + [f"--area {a}" for a in self.areas] + \
            [f"--skip {p}" for p in self.skip_prefixes]
        return " ".join(given) or "(everything)"


def select(cases: Iterable[Case], selection: Selection) -> list[Case]:
    """The selected cases in declaration order; selecting none is an error, never a pass, and so is a `--case`,
    `--area` or `--skip` that matches no case at all (a typo would otherwise select or leave out nothing, unseen)."""
    cases = list(cases)
    for option, given in (("--case", selection.case_prefixes), ("--skip", selection.skip_prefixes)):
        for prefix in given:
            if not any(case.id.startswith(prefix) for case in cases):
                raise CouldNotRun(f"no case matches {option} {prefix}")
    for area in selection.areas:
        if not any(case.id.startswith(area.strip("/") + "/") for case in cases):
            raise CouldNotRun(f"no case matches --area {area}")
    chosen = [case for case in cases if selection.matches(case)]
    if not chosen:
        raise CouldNotRun(f"no case matches {selection.describe()}")
    return chosen


@dataclass(frozen=True)
class Result:
    """One case's verdict and how long its check took."""

    case: Case
    verdict: Verdict
    seconds: float


def run_case(case: Case, target: Any) -> Result:
    """Run one check; whatever it raises or however long it hangs, answer a verdict."""
    started = time.monotonic()
    budget = gevent.Timeout(case.budget_seconds)
    budget.start()
    try:
        verdict = case.check(target)
        if not isinstance(verdict, Verdict):
            verdict = Verdict.errored(f"the check answered {verdict!r}, not a verdict")
    except gevent.Timeout as timeout:
        if timeout is not budget:
            raise
        verdict = Verdict.errored(f"the check did not finish within {case.budget_seconds:g} s")
    except Exception as exc:  # a check must never stop the run; its exception is its verdict
        verdict = Verdict.errored(f"{type(exc).__name__}: {exc}")
    finally:
        budget.close()
    return Result(case, verdict, time.monotonic() - started)


def _batches(cases: Sequence[Case]) -> Iterator[list[Case]]:
    """Runs of independent cases, with each exclusive case alone in its own batch."""
    batch: list[Case] = []
    for case in cases:
        if case.exclusive:
            if batch:
                yield batch
                batch = []
            yield [case]
        else:
            batch.append(case)
    if batch:
        yield batch


def run(cases: Sequence[Case], target: Any, jobs: int = DEFAULT_JOBS) -> Iterator[Result]:
    """Run `cases` against `target`, yielding results in declaration order as they are ready."""
    if jobs < 1:
        raise CouldNotRun("--jobs must be at least 1")
    pool = Pool(jobs)
    for batch in _batches(cases):
        # imap keeps the input order, so output never depends on which case finished first.
        yield from pool.imap(functools.partial(run_case, target=target), batch)
