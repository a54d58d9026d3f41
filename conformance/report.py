"""What a run prints and writes: the text report, a JSON report and JUnit XML.

Text: one aligned line per case as it finishes (`PASS  assertion/expired-rejected  Expired
assertions are refused`), then a failures block with every violation as expected against
actual, then a closing line `N passed, N failed` alone on its line. An errored case (its check
could not finish) counts among the failed: it did not pass.
"""
from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from datetime import datetime, timezone
from typing import Any, Sequence

from conformance.case import Case, Outcome
from conformance.runner import EXIT_FAILED, EXIT_PASSED, Result

LABELS = {Outcome.PASSED: "PASS", Outcome.FAILED: "FAIL", Outcome.ERRORED: "ERROR"}
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
    """(passed, failed); errored cases count as failed."""
    passed = sum(1 for r in results if r.verdict.outcome is Outcome.PASSED)
    return passed, len(results) - passed


def closing_line(results: Sequence[Result]) -> str:
    """`N passed, N failed`, the last line of the text report."""
    passed, failed = counts(results)
    return f"{passed} passed, {failed} failed"


def exit_code(results: Sequence[Result]) -> int:
    """0 when every case passed, 1 when any failed or errored."""
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
    return out


def failures_block(results: Sequence[Result], width: int) -> list[str]:
    """Every case that did not pass, with every violation; empty when all passed."""
    failing = [r for r in results if r.verdict.outcome is not Outcome.PASSED]
    if not failing:
        return []
    out = ["", "Failures:"]
    for result in failing:
        out += ["", line(result, width)] + _details(result, " " * (LABEL_WIDTH + 1))
    return out + [""]


def to_json(suite: str, results: Sequence[Result]) -> dict[str, Any]:
    """The whole run as plain data: counts, then each case with its verdict."""
    passed, failed = counts(results)
    return {
        "suite": suite,
        "passed": passed,
        "failed": failed,
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
                "seconds": round(r.seconds, 3),
            }
            for r in results
        ],
    }


def write_json(path: str, suite: str, results: Sequence[Result]) -> None:
    """Write `to_json` to `path`, UTF-8."""
    with open(path, "w", encoding="utf-8") as file:
        json.dump(to_json(suite, results), file, indent=2, ensure_ascii=False)
        file.write("\n")


def _xml_text(text: str) -> str:
    return _NOT_XML.sub("\ufffd", text)


def to_junit(suite: str, results: Sequence[Result]) -> ET.ElementTree:
    """JUnit XML: one testsuite, one testcase per case, a failure or error where it did not pass."""
    failures = sum(1 for r in results if r.verdict.outcome is Outcome.FAILED)
    errors = sum(1 for r in results if r.verdict.outcome is Outcome.ERRORED)
    total_time = f"{sum(r.seconds for r in results):.3f}"
    root = ET.Element("testsuites", name="conformance", tests=str(len(results)),
                      failures=str(failures), errors=str(errors), time=total_time)
    testsuite = ET.SubElement(
        root, "testsuite", name=f"conformance.{suite}", tests=str(len(results)),
        failures=str(failures), errors=str(errors), skipped="0", time=total_time,
        timestamp=datetime.now(timezone.utc).replace(microsecond=0).isoformat(),
    )
    for result in results:
        case, verdict = result.case, result.verdict
        testcase = ET.SubElement(
            testsuite, "testcase", name=case.id,
            classname=f"conformance.{suite}." + case.area.replace("/", "."),
            time=f"{result.seconds:.3f}",
        )
        if verdict.outcome is Outcome.PASSED:
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


def write_junit(path: str, suite: str, results: Sequence[Result]) -> None:
    """Write `to_junit` to `path`, UTF-8 with an XML declaration."""
    to_junit(suite, results).write(path, encoding="utf-8", xml_declaration=True)
