"""Reports: aligned lines, a failures block, the closing line, JSON and JUnit XML."""
from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from datetime import datetime, timezone

from conformance import report
from conformance.case import Case, Verdict, Violation
from conformance.runner import Result, run
from tests.conformance.helpers import SPEC, sample_suite


def _results() -> list[Result]:
    return list(run(sample_suite().cases, target=None))


def test_one_aligned_line_per_case():
    results = _results()
    width = report.id_width([r.case for r in results])
    lines = [report.line(r, width) for r in results]
    assert lines == [
        "PASS  alpha/passes      It passes",
        "FAIL  beta/fails-twice  It fails twice",
        "ERROR gamma/raises      It raises",
    ]


def test_the_line_shape_of_the_brief():
    case = Case("assertion/expired-rejected", "Expired assertions are refused", "R.", (SPEC,),
                lambda target: Verdict.passed())
    result = Result(case, Verdict.passed(), 0.1)
    assert report.line(result, len(case.id)) == \
        "PASS  assertion/expired-rejected  Expired assertions are refused"


def test_the_failures_block_lists_every_violation_and_the_error():
    results = _results()
    block = "\n".join(report.failures_block(results, 16))
    assert "alpha/passes" not in block
    assert "requirement: Never holds." in block
    assert 'spec: spec/how-tools-run.txt: "Every tool call is signed"' in block
    assert "- status\n          expected: 200\n          actual:   500" in block
    assert "- body\n          expected: []\n          actual:   <html>" in block
    assert "error: KeyError: 'no such thing'" in block


def test_no_failures_block_when_everything_passed():
    results = [r for r in _results() if r.case.id == "alpha/passes"]
    assert report.failures_block(results, 12) == []
    assert report.closing_line(results) == "1 passed, 0 failed"
    assert report.exit_code(results) == 0


def test_the_closing_line_counts_errored_cases_as_failed():
    results = _results()
    assert report.closing_line(results) == "1 passed, 2 failed"
    assert report.exit_code(results) == 1


def test_the_json_report_has_every_case_and_violation(tmp_path):
    path = tmp_path / "report.json"
    report.write_json(str(path), "sample", _results())
    data = json.loads(path.read_text(encoding="utf-8"))
    assert (data["suite"], data["passed"], data["failed"]) == ("sample", 1, 2)
    by_id = {case["id"]: case for case in data["cases"]}
    assert list(by_id) == ["alpha/passes", "beta/fails-twice", "gamma/raises"]
    assert by_id["beta/fails-twice"]["outcome"] == "failed"
    assert by_id["beta/fails-twice"]["violations"] == [
        {"what": "status", "expected": "200", "actual": "500"},
        {"what": "body", "expected": "[]", "actual": "<html>"},
    ]
    assert by_id["gamma/raises"]["outcome"] == "errored"
    assert by_id["gamma/raises"]["error"] == "KeyError: 'no such thing'"
    assert by_id["alpha/passes"]["spec"] == [{"file": SPEC.file, "quote": SPEC.quote}]


def test_the_junit_report_parses_with_a_testcase_per_case(tmp_path):
    path = tmp_path / "report.xml"
    report.write_junit(str(path), "sample", _results())

    root = ET.parse(path).getroot()
    (suite,) = root.findall("testsuite")
    assert suite.get("name") == "conformance.sample"
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("3", "1", "1")
    cases = {case.get("name"): case for case in suite.findall("testcase")}
    assert list(cases) == ["alpha/passes", "beta/fails-twice", "gamma/raises"]
    assert list(cases["alpha/passes"]) == []
    failure = cases["beta/fails-twice"].find("failure")
    assert failure.get("message") == "status: expected 200, actual 500 (and 1 more)"
    assert "actual:   <html>" in failure.text
    assert cases["gamma/raises"].find("error").get("message") == "KeyError: 'no such thing'"
    assert cases["beta/fails-twice"].get("classname") == "conformance.sample.beta"


def test_junit_survives_characters_xml_cannot_carry(tmp_path):
    case = Case("area/binary", "Binary body", "R.", (SPEC,), lambda target: Verdict.passed())
    verdict = Verdict.failed([Violation("body", "json", "\x00\x1b[31m\ufffe")])
    path = tmp_path / "report.xml"
    report.write_junit(str(path), "sample", [Result(case, verdict, 0.0)])
    failure = ET.parse(path).getroot().find("testsuite/testcase/failure")
    assert "\ufffd[31m" in failure.text


def _skipped_and_hinted() -> list[Result]:
    skip = Case("area/not-here", "Not here", "R.", (SPEC,), lambda target: Verdict.skipped("no subject"))
    hinted = Case("area/hinted", "Hinted", "R.", (SPEC,), lambda target: Verdict.passed())
    return [Result(skip, Verdict.skipped("the URL carries no {subject}"), 0.0),
            Result(hinted, Verdict.failed([Violation("status", "2xx", "401")], ["a cached key set"]), 0.1)]


def test_a_skipped_case_is_neither_passed_nor_failed_and_says_why():
    results = _skipped_and_hinted()
    assert report.line(results[0], 13) == "SKIP  area/not-here  Not here"
    assert report.closing_line(results) == "0 passed, 1 failed, 1 skipped"
    assert report.closing_line(results[:1]) == "0 passed, 0 failed, 1 skipped"
    assert report.exit_code(results[:1]) == 0
    assert "area/not-here" not in "\n".join(report.failures_block(results, 13))


def test_a_likely_cause_is_printed_after_the_violations():
    block = report.failures_block(_skipped_and_hinted(), 13)
    assert block.index("      likely cause: a cached key set") > block.index("          actual:   401")


def test_junit_time_is_the_wall_time_and_timestamp_the_start(tmp_path):
    started = datetime(2025, 5, 2, 9, 30, 15, 123456, tzinfo=timezone.utc)
    results = _results() + _skipped_and_hinted()  # case times sum to far less than the wall time
    path = tmp_path / "report.xml"
    report.write_junit(str(path), "sample", results, started, 42.5)
    root = ET.parse(path).getroot()
    suite = root.find("testsuite")
    assert (suite.get("time"), root.get("time")) == ("42.500", "42.500")
    assert suite.get("timestamp") == "2025-05-02T09:30:15+00:00"
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors"), suite.get("skipped")) == \
        ("5", "2", "1", "1")
    skipped = [case for case in suite.findall("testcase") if case.find("skipped") is not None]
    assert [case.get("name") for case in skipped] == ["area/not-here"]
    assert skipped[0].find("skipped").get("message") == "the URL carries no {subject}"


def test_a_run_that_could_not_run_still_gets_a_junit_file_with_one_error(tmp_path):
    path = tmp_path / "report.xml"
    started = datetime(2025, 5, 2, 9, 30, 15, tzinfo=timezone.utc)
    report.write_could_not_run_junit(str(path), "platform", "the mock refused: wrong-issuer", started, 1.25)
    suite = ET.parse(path).getroot().find("testsuite")
    assert (suite.get("tests"), suite.get("errors"), suite.get("time")) == ("1", "1", "1.250")
    (case,) = suite.findall("testcase")
    assert case.get("name") == "could-not-run"
    assert case.find("error").get("message") == "the mock refused: wrong-issuer"


def test_the_json_report_has_the_start_the_wall_time_and_the_hints(tmp_path):
    path = tmp_path / "report.json"
    started = datetime(2025, 5, 2, 9, 30, 15, tzinfo=timezone.utc)
    report.write_json(str(path), "sample", _skipped_and_hinted(), started, 3.0)
    data = json.loads(path.read_text())
    assert (data["started"], data["seconds"], data["skipped"], data["could_not_run"]) == \
        ("2025-05-02T09:30:15+00:00", 3.0, 1, None)
    assert data["cases"][1]["hints"] == ["a cached key set"]
