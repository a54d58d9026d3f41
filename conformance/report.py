"""What a run prints and writes: the text report, a JSON report and JUnit XML.

Text: one aligned line per case as it finishes (`PASS  assertion/expired-rejected  Expired
assertions are refused`), then a failures block with every violation as expected against
actual (and the likely cause, where the check could tell one), then a closing line `N passed, N
failed` alone on its line (`, N skipped` added when a case did not apply). An errored case (its
check could not finish) counts among the failed: it did not pass.

JUnit's `testsuite@time` is the run's wall time and `@timestamp` its start, as CI dashboards read
them; a run that could not start at all still gets a JUnit file, with one errored test saying why.
"""
from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from datetime import datetime, timezone
from typing import Any, Sequence

from conformance.case import Case, Outcome
from conformance.runner import EXIT_FAILED, EXIT_PASSED, Result

LABELS = {Outcome.PASSED: "PASS", Outcome.FAILED: "FAIL", Outcome.ERRORED: "ERROR", Outcome.SKIPPED: "SKIP"}
LABEL_WIDTH = max(len(label) for label in LABELS.values())

# Characters XML 1.0 cannot carry at all, even escaped; a target's body may hold any of them.
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def id_width(cases: Sequence[Case]) -> int:
    """The id column's width for these cases, so every line's title starts at one column."""
    return max((len(case.id) for case in cases), default=0)


def line(result: Result, width: int) -> str:
    """One case's line: label, id, title, in aligned columns."""
    label = LABELS[result.verdict.outcome]
    return f"{label:<{LABEL_WIDTH}} {result.case.id:<{width}}  {result.case.title}".rstrip()


def listing_line(case: Case, width: int) -> str:
    """One case as `list` shows it: id and title."""
    return f"{case.id:<{width}}  {case.title}"


def counts(results: Sequence[Result]) -> tuple[int, int]:
    """(passed, failed); errored cases count as failed, skipped ones as neither."""
    passed = sum(1 for r in results if r.verdict.outcome is Outcome.PASSED)
    skipped = skipped_count(results)
    return passed, len(results) - passed - skipped


def skipped_count(results: Sequence[Result]) -> int:
    """How many cases did not apply to the target."""
    return sum(1 for r in results if r.verdict.outcome is Outcome.SKIPPED)


def closing_line(results: Sequence[Result]) -> str:
    """`N passed, N failed` (and `, N skipped` when any were), the last line of the text report."""
    passed, failed = counts(results)
    skipped = skipped_count(results)
    return f"{passed} passed, {failed} failed" + (f", {skipped} skipped" if skipped else "")


def exit_code(results: Sequence[Result]) -> int:
    """0 when no case failed or errored, 1 when any did."""
    return EXIT_PASSED if counts(results)[1] == 0 else EXIT_FAILED


def _details(result: Result, indent: str) -> list[str]:
    """The why of one case that did not pass: requirement, spec, then each violation."""
    case, verdict = result.case, result.verdict
    out = [f"{indent}requirement: {case.requirement}"]
    out += [f"{indent}spec: {ref}" for ref in case.spec]
    if verdict.error is not None:
        out.append(f"{indent}error: {verdict.error}")
    for violation in verdict.violations:
        out.append(f"{indent}- {violation.what}")
        out.append(f"{indent}    expected: {violation.expected}")
        out.append(f"{indent}    actual:   {violation.actual}")
    out += [f"{indent}likely cause: {hint}" for hint in verdict.hints]
    return out


def failures_block(results: Sequence[Result], width: int) -> list[str]:
    """Every case that did not pass, with every violation; empty when all passed."""
    failing = [r for r in results if r.verdict.outcome in (Outcome.FAILED, Outcome.ERRORED)]
    if not failing:
        return []
    out = ["", "Failures:"]
    for result in failing:
        out += ["", line(result, width)] + _details(result, " " * (LABEL_WIDTH + 1))
    return out + [""]


def _stamp(started: datetime) -> str:
    return started.astimezone(timezone.utc).replace(microsecond=0).isoformat()


def to_json(suite: str, results: Sequence[Result], started: datetime | None = None,
            seconds: float | None = None, could_not_run: str | None = None) -> dict[str, Any]:
    """The whole run as plain data: when and how long, counts, then each case with its verdict.

    `could_not_run` is the reason a run that never started gives (exit 2); it has no cases.
    """
    passed, failed = counts(results)
    return {
        "suite": suite,
        "started": _stamp(started) if started else None,
        "seconds": round(seconds, 3) if seconds is not None else None,
        "could_not_run": could_not_run,
        "passed": passed,
        "failed": failed,
        "skipped": skipped_count(results),
        "cases": [
            {
                "id": r.case.id,
                "area": r.case.area,
                "title": r.case.title,
                "requirement": r.case.requirement,
                "spec": [{"file": ref.file, "quote": ref.quote} for ref in r.case.spec],
                "outcome": r.verdict.outcome.value,
                "violations": [v.to_dict() for v in r.verdict.violations],
                "error": r.verdict.error,
                "hints": list(r.verdict.hints),
                "seconds": round(r.seconds, 3),
            }
            for r in results
        ],
    }


def write_json(path: str, suite: str, results: Sequence[Result], started: datetime | None = None,
               seconds: float | None = None, could_not_run: str | None = None) -> None:
    """Write `to_json` to `path`, UTF-8."""
    with open(path, "w", encoding="utf-8") as file:
        json.dump(to_json(suite, results, started, seconds, could_not_run), file, indent=2,
                  ensure_ascii=False)
        file.write("\n")


def _xml_text(text: str) -> str:
    return _NOT_XML.sub("\ufffd", text)


def _testsuite(root: ET.Element, suite: str, tests: int, failures: int, errors: int, skipped: int,
               started: datetime, seconds: float) -> ET.Element:
    wall = f"{seconds:.3f}"
    root.attrib.update(tests=str(tests), failures=str(failures), errors=str(errors), time=wall)
    return ET.SubElement(
        root, "testsuite", name=f"conformance.{suite}", tests=str(tests), failures=str(failures),
        errors=str(errors), skipped=str(skipped), time=wall, timestamp=_stamp(started),
    )


def to_junit(suite: str, results: Sequence[Result], started: datetime | None = None,
             seconds: float | None = None) -> ET.ElementTree:
    """JUnit XML: one testsuite, one testcase per case, a failure, error or skip where it did not pass.

    `started` and `seconds` are the run's start and wall time (cases run side by side, so the sum
    of their times says nothing about how long the run took); without them, now and that sum.
    """
    failures = sum(1 for r in results if r.verdict.outcome is Outcome.FAILED)
    errors = sum(1 for r in results if r.verdict.outcome is Outcome.ERRORED)
    root = ET.Element("testsuites", name="conformance")
    testsuite = _testsuite(root, suite, len(results), failures, errors, skipped_count(results),
                           started or datetime.now(timezone.utc),
                           sum(r.seconds for r in results) if seconds is None else seconds)
    for result in results:
        case, verdict = result.case, result.verdict
        testcase = ET.SubElement(
            testsuite, "testcase", name=case.id,
            classname=f"conformance.{suite}." + case.area.replace("/", "."),
            time=f"{result.seconds:.3f}",
        )
        if verdict.outcome is Outcome.PASSED:
            continue
        if verdict.outcome is Outcome.SKIPPED:
            ET.SubElement(testcase, "skipped", message=_xml_text(verdict.error or "skipped"))
            continue
        if verdict.outcome is Outcome.ERRORED:
            element = ET.SubElement(testcase, "error", type="errored")
            element.set("message", _xml_text(verdict.error or "errored"))
        else:
            element = ET.SubElement(testcase, "failure", type="violation")
            first = verdict.violations[0]
            summary = f"{first.what}: expected {first.expected}, actual {first.actual}"
            if len(verdict.violations) > 1:
                summary += f" (and {len(verdict.violations) - 1} more)"
            element.set("message", _xml_text(summary))
        element.text = _xml_text("\n".join(_details(result, "")))
    ET.indent(root)
    return ET.ElementTree(root)


def could_not_run_junit(suite: str, reason: str, started: datetime, seconds: float) -> ET.ElementTree:
    """JUnit XML for a run that could not start: one errored testcase, `could-not-run`, saying why,
    so CI shows a report rather than a missing file."""
    root = ET.Element("testsuites", name="conformance")
    testsuite = _testsuite(root, suite, 1, 0, 1, 0, started, seconds)
    testcase = ET.SubElement(testsuite, "testcase", name="could-not-run",
                             classname=f"conformance.{suite}", time=f"{seconds:.3f}")
    element = ET.SubElement(testcase, "error", type="could-not-run", message=_xml_text(reason))
    element.text = _xml_text(f"could not run: {reason}")
    ET.indent(root)
    return ET.ElementTree(root)


def write_junit(path: str, suite: str, results: Sequence[Result], started: datetime | None = None,
                seconds: float | None = None) -> None:
    """Write `to_junit` to `path`, UTF-8 with an XML declaration."""
    to_junit(suite, results, started, seconds).write(path, encoding="utf-8", xml_declaration=True)


def write_could_not_run_junit(path: str, suite: str, reason: str, started: datetime, seconds: float) -> None:
    """Write `could_not_run_junit` to `path`, UTF-8 with an XML declaration."""
    could_not_run_junit(suite, reason, started, seconds).write(path, encoding="utf-8", xml_declaration=True)
