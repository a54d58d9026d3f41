"""The command: exit 0 all passed, 1 a case failed, 2 could not run; selection; list; reports."""
from __future__ import annotations

import contextlib
import io
import json
import xml.etree.ElementTree as ET

from conformance.cli import execute, main
from conformance.endpoint import SUITE as ENDPOINT
from conformance.issuer import KitIssuer
from conformance.platform import SUITE as PLATFORM
from conformance.runner import CouldNotRun, Selection
from tests.conformance.helpers import sample_suite
from tests.support.loopback import free_port


@contextlib.contextmanager
def _no_target():
    yield "target"


def _execute(selection=None, **kwargs) -> tuple[int, str, str]:
    selection = selection or Selection()
    out, err = io.StringIO(), io.StringIO()
    code = execute(sample_suite(), _no_target, selection, out=out, err=err, **kwargs)
    return code, out.getvalue(), err.getvalue()


def test_a_failing_case_exits_1_with_lines_failures_and_the_closing_line():
    code, out, _ = _execute(banner=lambda target: [f"running against {target}"])
    lines = out.splitlines()
    assert code == 1
    assert lines[0] == "running against target"
    assert lines[1:4] == [
        "PASS  alpha/passes      It passes",
        "FAIL  beta/fails-twice  It fails twice",
        "ERROR gamma/raises      It raises",
    ]
    assert "Failures:" in lines
    assert lines[-1] == "1 passed, 2 failed"


def test_all_selected_cases_passing_exits_0():
    code, out, _ = _execute(Selection(areas=("alpha",)))
    assert code == 0
    assert out.splitlines() == ["PASS  alpha/passes  It passes", "1 passed, 0 failed"]


def test_nothing_selected_exits_2_without_opening_the_target():
    opened = []

    @contextlib.contextmanager
    def target():
        opened.append(True)
        yield None

    out, err = io.StringIO(), io.StringIO()
    code = execute(sample_suite(), target, Selection(areas=("nope",)), out=out, err=err)
    assert code == 2
    assert opened == []
    assert err.getvalue() == "could not run: no case matches --area nope\n"
    assert out.getvalue() == ""


def test_a_target_that_cannot_open_exits_2():
    @contextlib.contextmanager
    def unreachable():
        raise CouldNotRun("cannot reach the endpoint")
        yield  # pragma: no cover

    out, err = io.StringIO(), io.StringIO()
    assert execute(sample_suite(), unreachable, Selection(), out=out, err=err) == 2
    assert "cannot reach the endpoint" in err.getvalue()


def test_reports_are_written_where_asked(tmp_path):
    code, _, _ = _execute(json_path=str(tmp_path / "r.json"), junit_path=str(tmp_path / "r.xml"))
    assert code == 1
    assert json.loads((tmp_path / "r.json").read_text())["failed"] == 2
    assert ET.parse(tmp_path / "r.xml").getroot().find("testsuite").get("tests") == "3"


def test_a_report_into_a_missing_directory_exits_2_before_running(tmp_path):
    code, out, err = _execute(junit_path=str(tmp_path / "missing" / "r.xml"))
    assert code == 2
    assert out == ""
    assert "no such directory" in err


def test_list_shows_every_endpoint_case(capsys):
    assert main(["list", "endpoint"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines] == [case.id for case in ENDPOINT]
    assert lines[0].split()[0] == "endpoint/valid-call-accepted"
    assert all(line.startswith("endpoint/") for line in lines)


def test_list_filters_by_case_prefix_and_area(capsys):
    assert main(["list", "endpoint", "--case", "endpoint/alg", "--case", "endpoint/no-t"]) == 0
    ids = [line.split()[0] for line in capsys.readouterr().out.splitlines()]
    assert ids == ["endpoint/alg-none-rejected", "endpoint/no-token-rejected"]
    assert main(["list", "endpoint", "--area", "assertion"]) == 2  # that area is the platform suite's


def test_help_exits_0_and_bad_arguments_exit_2(capsys):
    assert main(["--help"]) == 0
    assert main(["endpoint", "--method", "GET", "--tool", "t"]) == 2  # no --url
    assert main(["endpoint", "--url", "http://127.0.0.1:1/", "--method", "TRACE", "--tool", "t"]) == 2
    assert main([]) == 2


def _endpoint(url: str, *extra: str) -> list[str]:
    return ["endpoint", "--url", url, "--method", "GET", "--tool", "get_orders", *extra]


def test_an_unreachable_endpoint_exits_2(capsys):
    assert main(_endpoint(f"http://127.0.0.1:{free_port()}/users/{{subject}}/orders")) == 2
    assert "could not run: cannot reach the endpoint at 127.0.0.1" in capsys.readouterr().err


def test_a_placeholder_without_a_param_exits_2(capsys):
    assert main(_endpoint("http://127.0.0.1:1/orders/{order}")) == 2
    assert "the URL's {order} has no --param order" in capsys.readouterr().err


def test_nothing_selected_on_the_command_line_exits_2(capsys):
    assert main(_endpoint("http://127.0.0.1:1/x", "--case", "endpoint/nope")) == 2
    assert "no case matches --case endpoint/nope" in capsys.readouterr().err


def test_a_jwks_port_already_taken_exits_2(capsys):
    with KitIssuer() as endpoint_stand_in, KitIssuer() as squatter:
        port = squatter.url.rsplit(":", 1)[1]
        code = main(_endpoint(f"{endpoint_stand_in.url}/x", "--jwks-port", port))
    assert code == 2
    assert f"cannot serve the key set on 127.0.0.1:{port}" in capsys.readouterr().err


def test_an_unreadable_key_file_exits_2(tmp_path, capsys):
    bad = tmp_path / "key.pem"
    bad.write_text("not a key")
    with KitIssuer() as endpoint_stand_in:
        code = main(_endpoint(f"{endpoint_stand_in.url}/x", "--key-file", str(bad)))
    assert code == 2
    assert "--key-file" in capsys.readouterr().err


def test_skip_leaves_out_what_it_names_whatever_else_selects_it():
    code, out, _ = _execute(Selection(skip_prefixes=("beta/", "gamma/")))
    assert code == 0
    assert out.splitlines() == ["PASS  alpha/passes  It passes", "1 passed, 0 failed"]
    code, _, err = _execute(Selection(areas=("beta",), skip_prefixes=("beta/fails",)))
    assert code == 2
    assert err == "could not run: no case matches --area beta --skip beta/fails\n"


def test_skip_on_the_command_line(capsys):
    assert main(["list", "endpoint", "--skip", "endpoint/valid", "--skip", "endpoint/a"]) == 0
    ids = [line.split()[0] for line in capsys.readouterr().out.splitlines()]
    assert "endpoint/valid-call-accepted" not in ids and "endpoint/alg-none-rejected" not in ids
    assert "endpoint/no-token-rejected" in ids


def test_area_help_lists_each_suites_real_areas(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "1000")  # click wraps at the terminal's width, and may break after a hyphen
    assert main(["platform", "--help"]) == 0
    help_text = " ".join(capsys.readouterr().out.split())
    listed = help_text.split("this area (repeatable): ")[1].split(" --skip")[0].split(", ")
    assert listed == list(dict.fromkeys(case.area for case in PLATFORM))
    assert main(["endpoint", "--help"]) == 0
    assert "this area (repeatable): endpoint " in " ".join(capsys.readouterr().out.split())


def test_a_run_that_could_not_run_writes_its_junit_and_json_saying_why(tmp_path):
    code, _, err = _execute(Selection(areas=("nope",)), junit_path=str(tmp_path / "r.xml"),
                            json_path=str(tmp_path / "r.json"))
    assert code == 2
    suite = ET.parse(tmp_path / "r.xml").getroot().find("testsuite")
    assert (suite.get("tests"), suite.get("errors")) == ("1", "1")
    assert suite.find("testcase/error").get("message") == "no case matches --area nope"
    assert json.loads((tmp_path / "r.json").read_text())["could_not_run"] == "no case matches --area nope"


def test_bad_arguments_still_leave_a_junit_report(tmp_path, capsys):
    junit = tmp_path / "r.xml"
    assert main(["endpoint", "--method", "GET", "--tool", "t", "--junit", str(junit)]) == 2
    assert capsys.readouterr().err == "Error: conformance endpoint: Missing option '--url'.\n"
    error = ET.parse(junit).getroot().find("testsuite/testcase/error")
    assert error.get("message") == "conformance endpoint: Missing option '--url'."


def test_an_unreachable_endpoint_leaves_a_junit_report_saying_so(tmp_path, capsys):
    junit = tmp_path / "r.xml"
    url = f"http://127.0.0.1:{free_port()}/x"
    assert main(_endpoint(url, "--junit", str(junit))) == 2
    error = ET.parse(junit).getroot().find("testsuite/testcase/error")
    assert error.get("message").startswith("cannot reach the endpoint at 127.0.0.1")
