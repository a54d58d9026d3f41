"""The command line: `python -m mock_backend` as a real process, and `cli.main` refusing bad starts."""
from __future__ import annotations

import ast
import re
import socket
import subprocess
import sys
from pathlib import Path

import gevent
import pytest

import mock_backend
from mock_backend.cli import main

REPO = Path(mock_backend.__file__).resolve().parent.parent
LISTENING = re.compile(r"mock backend listening on (http://127\.0\.0\.1:(\d+)) \(trusting: (.*)\)\n")


@pytest.fixture
def process(harness):
    """`python -m mock_backend` on a free port, trusting the test's issuer and one more."""
    child = subprocess.Popen(
        [sys.executable, "-m", "mock_backend", "--port", "0",
         "--issuer", harness.issuer, "--issuer", "https://other.example/orgs/x"],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        with gevent.Timeout(20):
            line = child.stdout.readline()
        yield child, line
    finally:
        child.terminate()
        child.wait(timeout=5)
        child.stdout.close()
        child.stderr.close()


def test_module_prints_one_line_once_listening_and_verifies(process, harness, http):
    _, line = process
    match = LISTENING.fullmatch(line)
    assert match, line
    base, trusted = match.group(1), match.group(3)
    assert trusted == f"{harness.issuer}, https://other.example/orgs/x"
    assert http.get(f"{base}/_health").status_code == 200
    # The separate process fetches keys from the test's JWKS server and verifies for real.
    assert http.get(f"{base}/users/alice/orders", headers=harness.bearer()).status_code == 200
    assert http.get(f"{base}/users/alice/orders", headers=harness.bearer("x")).status_code == 401


def test_unknown_broken_mode_refuses_to_start(capsys):
    assert main(["--issuer", "https://iss.example", "--broken", "skip-everything"]) == 2
    error = capsys.readouterr().err
    assert "unknown broken mode 'skip-everything'" in error and "accept-alg-none" in error


def test_an_issuer_is_required(capsys):
    assert main([]) == 2
    assert "--issuer" in capsys.readouterr().err


def test_a_taken_port_refuses_to_start(capsys):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert main(["--port", str(port), "--issuer", "https://iss.example"]) == 2
    assert "cannot listen" in capsys.readouterr().err


def test_importing_the_cli_does_not_patch():
    code = "import mock_backend.cli; from gevent import monkey; print(monkey.is_module_patched('socket'))"
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=30)
    assert result.stdout.strip() == "False", result.stderr


def test_the_mock_imports_nothing_from_the_service():
    for path in Path(mock_backend.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = ([alias.name for alias in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            assert not any(name == "service" or name.startswith("service.") for name in names), path


def test_requires_approval_names_the_tools_refused_without_it(monkeypatch, harness, capsys):
    served = {}
    monkeypatch.setattr("mock_backend.cli.serve_app", lambda app, *args, **kwargs: served.update(app=app, **kwargs))
    assert main(["--issuer", harness.issuer, "--requires-approval", "place_order",
                 "--requires-approval", "cancel_order"]) == 0
    assert served["notes"] == ("mock backend: calls of place_order, cancel_order need the person's approval",)
    client = served["app"].test_client()
    for tool in ("place_order", "cancel_order"):
        refused = client.post(f"/tools/{tool}/echo", headers=harness.bearer(tool))
        assert (refused.status_code, refused.get_json()["reason"]) == (401, "missing-approval")
        assert client.post(f"/tools/{tool}/echo", headers=harness.bearer(tool, approval="a")).status_code == 200
    assert client.get("/users/alice/orders", headers=harness.bearer()).status_code == 200


def test_help_explains_requires_approval(capsys):
    assert main(["--help"]) == 0
    assert "--requires-approval TOOL" in capsys.readouterr().out


def test_algorithm_pins_the_organizations_one_and_single_use_takes_each_assertion_once(monkeypatch, harness):
    served = {}
    monkeypatch.setattr("mock_backend.cli.serve_app", lambda app, *args, **kwargs: served.update(app=app, **kwargs))
    assert main(["--issuer", harness.issuer, "--algorithm", "EdDSA", "--single-use", "refund"]) == 0
    assert served["notes"] == ("mock backend: calls of refund take each assertion once",
                               "mock backend: only EdDSA assertions are verified")
    client = served["app"].test_client()
    refused = client.get("/users/alice/orders", headers=harness.bearer(alg="ES256"))
    assert (refused.status_code, refused.get_json()["reason"]) == (401, "bad-algorithm")
    assert client.get("/users/alice/orders", headers=harness.bearer(alg="EdDSA")).status_code == 200
    once = harness.bearer("refund", alg="EdDSA")
    assert client.post("/tools/refund/echo", headers=once).status_code == 200
    again = client.post("/tools/refund/echo", headers=once)
    assert (again.status_code, again.get_json()["reason"]) == (401, "replayed")
    assert client.post("/tools/refund/echo", headers=harness.bearer("refund", alg="EdDSA")).status_code == 200
