"""`toolgate conformance platform` as an operator runs it: its own platform, or one it is pointed at.

The first test is the one CI relies on: from a fresh checkout the kit starts a platform and a mock
backend itself, runs every case, passes, and writes both reports.
"""
from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET

import pytest
import requests

from conformance.cli import main
from conformance.platform import SUITE
from conformance.platform.launch import mock_backend, model_server
from tests.conformance_platform.modes import ALL
from tests.conformance_platform.state import DEADLINE_SECONDS
from tests.support.loopback import free_port


def test_the_whole_suite_passes_against_a_platform_the_kit_starts(whole_run):
    done = whole_run.finished()  # started with the folder's first test (conftest.py), to run beside the others
    lines = done.stdout.splitlines()

    assert done.returncode == 0, done.stdout[done.stdout.find("Failures:"):] + done.stderr
    assert lines[0].startswith("platform: http://127.0.0.1:")
    assert f"note:     the call deadline is taken as {DEADLINE_SECONDS:g} s, not the spec's 10 s: a run testing " \
        "the kit, not a verdict on a platform" in lines
    assert [line.split()[1] for line in lines if line.startswith("PASS ")] == ALL
    assert lines[-1] == f"{len(SUITE)} passed, 0 failed"
    report = json.loads((whole_run.folder / "r.json").read_text())
    assert (report["suite"], report["passed"], report["failed"]) == ("platform", len(SUITE), 0)
    suite = ET.parse(whole_run.folder / "r.xml").getroot().find("testsuite")
    assert (suite.get("name"), suite.get("tests"), suite.get("failures")) == \
        ("conformance.platform", str(len(SUITE)), "0")


def test_list_shows_every_platform_case_with_its_title(capsys):
    assert main(["list", "platform"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines] == ALL
    assert all(line.split(maxsplit=1)[1].strip() for line in lines)


@pytest.mark.parametrize("arguments, message", [
    (["--url", "http://127.0.0.1:1"], "--url needs --admin-key"),
    (["--admin-key", "tgk_x"], "--admin-key, --mock-url and --model-url go with --url"),
    (["--area", "nothing-here"], "no case matches --area nothing-here"),
    (["--call-deadline-seconds", "11"], "must be more than 1.5 and at most 10 seconds (it only lowers"),
    (["--call-deadline-seconds", "1"], "must be more than 1.5 and at most 10 seconds (it only lowers"),
])
def test_arguments_that_cannot_run_exit_2(arguments, message, capsys):
    assert main(["platform", *arguments]) == 2
    assert message in capsys.readouterr().err


def test_an_unreachable_platform_exits_2(capsys):
    assert main(["platform", "--url", f"http://127.0.0.1:{free_port()}", "--admin-key", "tgk_x"]) == 2
    assert "cannot reach the platform" in capsys.readouterr().err


def test_a_wrong_admin_key_exits_2(doubles, capsys):
    code = main(["platform", "--url", doubles.url, "--admin-key", "tgk_not_a_key", "--mock-url",
                 doubles.mock_url, "--area", "subject"])
    assert code == 2
    assert "the admin key cannot mint a session token" in capsys.readouterr().err


def test_without_mock_url_the_kit_starts_a_mock_trusting_the_issuer(doubles, capsys):
    doubles.switch({}, {})
    code = main(["platform", "--url", doubles.url, "--admin-key", doubles.started.admin_key, "--area", "subject"])
    out = capsys.readouterr().out
    assert code == 0, out
    mock_line = next(line for line in out.splitlines() if line.startswith("mock:"))
    assert mock_line.split()[1] != doubles.mock_url
    assert out.splitlines()[-1] == "4 passed, 0 failed"


def test_without_an_agent_key_the_agent_cases_error_and_say_why(doubles, capsys):
    doubles.switch({}, {})
    code = main(["platform", "--url", doubles.url, "--admin-key", doubles.started.admin_key, "--mock-url",
                 doubles.mock_url, "--case", "lifecycle/agent"])
    out = capsys.readouterr().out
    assert code == 1
    assert "note:     no --agent-key" in out
    assert out.count("error: this case needs --agent-key") == 2
    assert out.splitlines()[-1] == "0 passed, 2 failed"


# Pre-flight: each refusal is one line and exit 2, before any case, and still leaves a JUnit report.

def _preflight(doubles, tmp_path, capsys, *arguments: str) -> str:
    junit = tmp_path / "r.xml"
    code = main(["platform", "--url", doubles.url, "--admin-key", doubles.started.admin_key,
                 *arguments, "--area", "subject", "--junit", str(junit)])
    captured = capsys.readouterr()
    assert code == 2, captured.out
    assert not [line for line in captured.out.splitlines() if line.startswith(("PASS", "FAIL", "ERROR"))]
    (line,) = captured.err.splitlines()
    assert line.startswith("could not run: pre-flight: ")
    error = ET.parse(junit).getroot().find("testsuite/testcase/error")
    assert error.get("message") == line[len("could not run: "):]
    return line


def test_preflight_refuses_an_admin_key_given_as_the_agent_key_and_publishes_nothing(doubles, tmp_path, capsys):
    doubles.switch({}, {})
    admin = doubles.started.admin_key
    line = _preflight(doubles, tmp_path, capsys, "--mock-url", doubles.mock_url, "--agent-key", admin)
    assert "--agent-key may publish, so it is not an agent key" in line
    absent = re.search(r"POST /v1/tools/(\w+)/publish", line).group(1)
    reply = requests.get(f"{doubles.url}/v1/tools/{absent}", headers={"Authorization": f"Bearer {admin}"},
                         timeout=10)
    assert reply.status_code == 404


def test_preflight_refuses_a_mock_that_trusts_another_issuer(doubles, tmp_path, capsys):
    doubles.switch({}, {})
    with mock_backend(f"http://127.0.0.1:{free_port()}/orgs/elsewhere") as elsewhere:
        line = _preflight(doubles, tmp_path, capsys, "--mock-url", elsewhere)
    assert f"the mock backend at {elsewhere} does not trust the organization's issuer: start it with " \
           f"--issuer {doubles.url}/orgs/" in line


def test_preflight_refuses_a_mock_the_platform_cannot_reach(doubles, tmp_path, capsys):
    doubles.switch({}, {"unreachable": True})
    try:
        line = _preflight(doubles, tmp_path, capsys, "--mock-url", doubles.mock_url)
    finally:
        doubles.switch({}, {})
    assert f"the platform cannot reach the mock backend at {doubles.mock_url}" in line
    assert "TOOLGATE_ALLOWED_NETWORKS" in line


def test_preflight_refuses_a_model_the_platform_does_not_run_turns_with(doubles, tmp_path, capsys):
    doubles.switch({}, {})
    with model_server() as other:
        line = _preflight(doubles, tmp_path, capsys, "--mock-url", doubles.mock_url, "--model-url", other)
    assert f"the platform does not run turns with the scripted model at {other}" in line
