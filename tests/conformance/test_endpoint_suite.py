"""The endpoint suite against the real mock backend, honest and broken one check at a time.

Each test starts its own mock on 127.0.0.1, in this process (as `python -m mock_backend` serves it:
tests/mock_backend/test_mock_cli.py starts that one), trusting the issuer the kit will serve; a fresh
mock per run, because a correct backend caches the key set it fetched.
"""
from __future__ import annotations

import contextlib
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from conformance.cli import main
from conformance.endpoint import SUITE

from tests.conformance.helpers import outcomes as _outcomes
from tests.helpers import free_port, mock_backend

REPO = Path(__file__).resolve().parents[2]

#: Each broken mode of the mock, and the cases that must fail against it (all others pass).
BROKEN = {
    "skip-audience": {"endpoint/wrong-audience-rejected"},
    "accept-expired": {"endpoint/expired-rejected"},
    "any-issuer": {"endpoint/wrong-issuer-rejected"},
    "skip-signature": {"endpoint/bad-signature-rejected", "endpoint/unknown-kid-rejected",
                       "endpoint/tampered-payload-rejected"},
    "accept-alg-none": {"endpoint/alg-none-rejected"},
    "accept-hs256": {"endpoint/hs256-public-key-rejected"},
    "no-auth": {"endpoint/no-token-rejected"},
}


@pytest.fixture
def start_mock():
    """Start mock backends trusting http://127.0.0.1:J; answer (base URL, J). All stopped after."""
    with contextlib.ExitStack() as running:

        def start(broken: str | None = None) -> tuple[str, int]:
            jwks_port = free_port()
            return running.enter_context(mock_backend([f"http://127.0.0.1:{jwks_port}"], broken)), jwks_port

        yield start


def _orders(base: str, jwks_port: int, *extra: str) -> list[str]:
    return ["endpoint", "--url", f"{base}/users/{{subject}}/orders", "--method", "GET",
            "--tool", "get_orders", "--jwks-port", str(jwks_port), *extra]


def test_every_case_passes_against_the_honest_mock(start_mock, tmp_path, capsys):
    base, jwks_port = start_mock()
    code = main(_orders(base, jwks_port, "--json", str(tmp_path / "r.json")))
    out = capsys.readouterr().out.splitlines()

    assert code == 0
    assert out[0] == f"issuer: http://127.0.0.1:{jwks_port}"
    assert [line.split()[1] for line in out[1:-1]] == [case.id for case in SUITE]
    assert all(line.startswith("PASS  ") for line in out[1:-1])
    assert out[-1] == f"{len(SUITE)} passed, 0 failed"
    assert set(_outcomes(tmp_path / "r.json").values()) == {"passed"}


def test_body_parameters_reach_the_honest_mock_as_json(start_mock, capsys):
    base, jwks_port = start_mock()
    code = main(["endpoint", "--url", f"{base}/users/{{subject}}/cart", "--method", "POST",
                 "--tool", "add_to_cart", "--subject", "alice", "--param", 'product_ids:=["p1"]',
                 "--jwks-port", str(jwks_port)])
    assert code == 0, capsys.readouterr().out


@pytest.mark.parametrize("mode", sorted(BROKEN))
def test_a_broken_mock_fails_exactly_the_cases_of_its_rule(mode, start_mock, tmp_path, capsys):
    base, jwks_port = start_mock(mode)
    code = main(_orders(base, jwks_port, "--json", str(tmp_path / "r.json")))
    out = capsys.readouterr().out

    outcomes = _outcomes(tmp_path / "r.json")
    assert code == 1
    assert {case for case, outcome in outcomes.items() if outcome == "failed"} == BROKEN[mode]
    assert {case for case, outcome in outcomes.items() if outcome == "passed"} == \
        {case.id for case in SUITE} - BROKEN[mode]
    for case_id in BROKEN[mode]:
        assert re.search(rf"^FAIL  {re.escape(case_id)} ", out, re.MULTILINE)
    assert out.splitlines()[-1] == f"{len(SUITE) - len(BROKEN[mode])} passed, {len(BROKEN[mode])} failed"


def test_an_endpoint_trusting_another_issuer_fails_only_the_valid_call(start_mock, tmp_path):
    base, _ = start_mock()
    code = main(_orders(base, free_port(), "--json", str(tmp_path / "r.json")))
    outcomes = _outcomes(tmp_path / "r.json")
    assert code == 1
    assert {case for case, outcome in outcomes.items() if outcome != "passed"} == \
        {"endpoint/valid-call-accepted"}


def test_every_case_fails_against_some_broken_target():
    from mock_backend.verify import BROKEN_MODES

    assert set(BROKEN) == set(BROKEN_MODES)
    covered = set().union(*BROKEN.values()) | {"endpoint/valid-call-accepted"}
    assert covered == {case.id for case in SUITE}


def test_a_kept_key_lets_back_to_back_runs_pass_against_one_backend(start_mock, tmp_path, capsys):
    base, jwks_port = start_mock()
    key_file = str(tmp_path / "kit-key.pem")
    assert main(_orders(base, jwks_port, "--key-file", key_file)) == 0
    assert oct(os.stat(key_file).st_mode & 0o777) == "0o600"
    assert main(_orders(base, jwks_port, "--key-file", key_file)) == 0, capsys.readouterr().out


def test_python_m_conformance_runs_the_suite_and_writes_junit(start_mock, tmp_path):
    honest, honest_jwks = start_mock()
    broken, broken_jwks = start_mock("no-auth")
    runs = {
        "honest": subprocess.Popen([sys.executable, "-m", "conformance", *_orders(
            honest, honest_jwks, "--junit", str(tmp_path / "honest.xml"))],
            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True),
        "broken": subprocess.Popen([sys.executable, "-m", "conformance", *_orders(
            broken, broken_jwks, "--junit", str(tmp_path / "broken.xml"))],
            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True),
    }
    done = {name: process.communicate(timeout=60) for name, process in runs.items()}

    assert runs["honest"].returncode == 0, done["honest"]
    assert runs["broken"].returncode == 1, done["broken"]
    assert done["honest"][1] == ""  # patched by __main__, so no note about running one at a time
    assert done["broken"][0].splitlines()[-1] == f"{len(SUITE) - 1} passed, 1 failed"
    suite = ET.parse(tmp_path / "broken.xml").getroot().find("testsuite")
    failed = [case.get("name") for case in suite.findall("testcase") if case.find("failure") is not None]
    assert failed == ["endpoint/no-token-rejected"]
    assert ET.parse(tmp_path / "honest.xml").getroot().find("testsuite").get("failures") == "0"
