"""Seeing calls run in parallel: the mock's gatherings, and its record of when each call ran.

A case that must see calls run at the same time points each of them at one gathering of the mock
(`together/<group>/<count>`): every call waits at the endpoint until all `count` of them are there at
once, and then each answers `met: true`. A platform running them one after another leaves each call
alone until its wait runs out, and it answers `met: false` with `most_present` 1. So the overlap is
observed at the endpoint, in milliseconds, and never inferred from how long a step took. The mock's
record of each call's interval is a second witness, and shows a failure's timeline.
"""
from __future__ import annotations

import json
from typing import Any, Sequence

from conformance.case import Check
from conformance.platform.budgets import GATHERING_WAIT_SHARE
from conformance.platform.client import PlatformTarget, brief

#: What a failure's report says when no call ever had company at the endpoint.
ONE_AT_A_TIME = "the calls arrived one at a time: the platform ran them one after another, not in parallel"


def gathering(target: PlatformTarget, group: str, count: int) -> str:
    """The mock behaviour for each of `count` calls that must meet at the endpoint.

    The group is named with the run's prefix, so no other run's calls join it; each call waits a share of
    the deadline for the others, so even a platform running them one after another answers every call.
    """
    wait = target.deadline * GATHERING_WAIT_SHARE
    return f"together/{target.name(group)}/{count}?wait={wait:g}"


def _answer(result: dict[str, Any]) -> dict[str, Any] | None:
    """A gathering's answer in a call's result (its output, as the endpoint sent it), or None."""
    try:
        answer = json.loads(result.get("output") or "")
    except (TypeError, ValueError):
        return None
    return answer if isinstance(answer, dict) and "met" in answer else None


def _described(result: dict[str, Any]) -> str:
    answer = _answer(result)
    if answer is None:
        return f"not a gathering's answer: {brief(result)}"
    return (f"met: {json.dumps(answer.get('met'))}, at most {answer.get('most_present')} there at once, "
            f"waited {answer.get('waited')} s")


def expect_met(check: Check, results: Sequence[dict[str, Any]], count: int) -> bool:
    """Record a violation unless each of the `count` calls' results is its gathering's `met: true`.

    `results` are the calls' results as the platform gave them back (`output` or `error`), a step's results
    or a conversation's context items alike.
    """
    answers = [_answer(r) for r in results]
    met = len(results) == count and all(a is not None and a.get("met") is True for a in answers)
    if not met and answers and all(a is not None and a.get("most_present") == 1 for a in answers):
        check.hint(ONE_AT_A_TIME)
    return check.expect(met, "what the calls saw at the endpoint", f"all {count} there at once (met: true each)",
                        "; ".join(_described(r) for r in results) or "no result")


def intervals(calls: list[dict[str, Any]]) -> str:
    """When each recorded call ran, relative to the first start, for a failure report."""
    origin = min(c["started"] for c in calls)
    return ", ".join(f"{c['started'] - origin:.2f}–{(c.get('ended') or origin) - origin:.2f} s" for c in calls)


def overlapping(calls: list[dict[str, Any]]) -> bool:
    """Whether two recorded calls ran at the same time (each began before the other ended)."""
    first, second = calls[0], calls[1]
    if None in (first.get("ended"), second.get("ended")):
        return False
    return first["started"] < second["ended"] and second["started"] < first["ended"]


def expect_overlapping(check: Check, target: PlatformTarget, names: Sequence[str]) -> None:
    """Record a violation unless the mock recorded one call to each of two tools, running at the same time."""
    calls = [target.calls_to(n) for n in names]
    if check.expect(all(len(c) == 1 for c in calls), "calls recorded", "one per tool", [len(c) for c in calls]):
        ran = [c[0] for c in calls]
        check.expect(overlapping(ran), "the two calls in the mock's record", "running at the same time",
                     intervals(ran))
