"""The endpoint suite against real backends on 127.0.0.1: honest ones pass, each broken one fails
exactly the case of the check it skips.

The backends run in this process on real sockets: the mock backend (honest, and in each of its
broken modes) and a pyjwt backend written as docs/conformance.md says (tests/conformance/
reference_backend.py), honest and with one flaw at a time. Each run gets fresh backends, because a
correct backend caches the key set it fetched. Their key refetch cooldown, and the kit's rotation
wait, are set short here (the real ones are 10 s and 35 s), so no test waits on a real clock.
"""
from __future__ import annotations

import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Callable

import pytest

from conformance.cli import main
from conformance.endpoint import SUITE
from mock_backend import create_app
from mock_backend.verify import BROKEN_MODES
from tests.conformance.helpers import outcomes as _outcomes
from tests.conformance.reference_backend import FLAW_ALGORITHMS, FLAWS, ReferenceBackend
from tests.support.loopback import free_port, serving

REPO = Path(__file__).resolve().parents[2]
ALL = [case.id for case in SUITE]
#: The backends' refetch cooldown and the kit's rotation wait, in these tests only. A cooldown an honest
#: backend started before the next key was published has run out by the kit's last call, which starts
#: once the wait is over, so it takes the key however slow the machine; one that cached the set for good
#: costs the whole wait.
#: The cooldown is long enough that a burst of forged calls sent at once ends inside it, however loaded the machine
#: (endpoint/jwks-refetch-bounded allows a refetch at its start and one more should the cooldown run out during it).
COOLDOWN = 0.3
ROTATION_WAIT = "0.5"

#: Each broken mode of the mock, and the cases that must fail against it (all others pass).
BROKEN = {
    "skip-audience": {"endpoint/wrong-audience-rejected"},
    "accept-expired": {"endpoint/expired-rejected", "endpoint/just-expired-rejected"},
    "any-issuer": {"endpoint/wrong-issuer-rejected"},
    "skip-signature": {"endpoint/bad-signature-rejected", "endpoint/unknown-kid-rejected",
                       "endpoint/kid-injection-rejected", "endpoint/tampered-payload-rejected",
                       "endpoint/other-algorithm-rejected"},
    "accept-alg-none": {"endpoint/alg-none-rejected"},
    "accept-hs256": {"endpoint/hs256-public-key-rejected"},
    "no-auth": {"endpoint/no-token-rejected"},
}

#: Where each reference tool lives: the orders are per-user ({subject} in the URL), products shared.
ORDERS = ("/users/{subject}/orders", "get_orders")
PRODUCTS = ("/products", "search_products")

#: The case that applies only to a tool the kit is told requires the person's approval (`--requires-approval`):
#: every other run skips it.
APPROVAL = "endpoint/no-approval-rejected"
#: The case that applies only to an endpoint the kit is told takes each assertion once (`--single-use`).
REPLAY = "endpoint/replay-rejected"
#: What an honest run skips without those options.
OPTIONAL = {APPROVAL, REPLAY}


def _run(make_app: Callable[[str], Callable], tmp_path: Path, *extra: str, tool=ORDERS) -> tuple[int, dict]:
    """Serve the backend `make_app(issuer)` and run the whole suite at it: (exit, outcomes by case)."""
    jwks_port = free_port()
    with serving(make_app(f"http://127.0.0.1:{jwks_port}")) as base:
        code = main(["endpoint", "--url", base + tool[0], "--method", "GET", "--tool", tool[1],
                     "--jwks-port", str(jwks_port), "--rotation-wait", ROTATION_WAIT,
                     "--json", str(tmp_path / "r.json"), *extra])
    return code, _outcomes(tmp_path / "r.json")


def mock(broken: str | None = None, requires_approval: tuple[str, ...] = (), **options) -> Callable[[str], Callable]:
    return lambda issuer: create_app([issuer], broken=broken, refetch_cooldown=COOLDOWN,
                                     requires_approval=requires_approval, **options)


def reference(flaw: str | None = None, **options) -> Callable[[str], Callable]:
    return lambda issuer: ReferenceBackend(issuer, flaw, COOLDOWN, **options)


#: What the report says for some flaws, beyond naming the case.
SAYS = {
    # a key rotation missed: the likely cause, not only expected against actual
    "caches-forever": r"likely cause: a new kid this run, and an endpoint that cached the last key set: "
                      r"it fetched http://127\.0\.0\.1:\d+/\.well-known/jwks\.json 1 time\(s\)",
    # refused, but only after fetching what the token pointed to: still a failure
    "fetches-kid-url": r"- fetches of http://127\.0\.0\.1:\d+/trap/kid/\w+/\.well-known/jwks\.json "
                       r"\(the token's kid\)\n +expected: none: never fetched\n +actual: +fetched 1 time",
    "follows-jku": r"\(the token's jku\)\n +expected: none: never fetched\n +actual: +fetched 1 time",
    # one fetch of the issuer's key set per forged call
    "no-cooldown": r"- fetches of http://127\.0\.0\.1:\d+/\.well-known/jwks\.json for a burst of 24 forged calls, each "
                   r"with an unknown random kid\n +expected: at most 2: one refetch per cooldown\n +actual: +2[0-4]\n",
    "drops-keys-on-failure": r"expected: 2xx, verified with the key the endpoint already has\n +actual: +HTTP 401 "
                             r"(?:.*\n)+ +likely cause: the endpoint asked the failing issuer for the key set \d+ "
                             r"time\(s\), 1 of them before the correct calls",
    "echoes-authorization": r"- the assertion in the correct call's 2xx body, which goes to the model word for word\n"
                            r" +expected: absent\n +actual: +found at character \d+",
}


def _failing(outcomes: dict[str, str]) -> set[str]:
    return {case for case, outcome in outcomes.items() if outcome == "failed"}


@pytest.mark.parametrize("algorithm", ["ES256", "EdDSA", "RS256"])
@pytest.mark.parametrize("backend", ["mock", "pyjwt"])
def test_every_case_passes_against_an_honest_backend(backend, algorithm, tmp_path, capsys):
    # Each pins the organization's algorithm, as the docs say.
    make = mock(algorithms=[algorithm]) if backend == "mock" else reference(algorithm=algorithm)
    code, outcomes = _run(make, tmp_path, "--algorithm", algorithm)
    out = capsys.readouterr().out.splitlines()

    assert code == 0, "\n".join(out)
    assert out[0].startswith("issuer: http://127.0.0.1:") and out[0].endswith(f"it signs with {algorithm})")
    assert out[1].startswith("untrusted: http://127.0.0.1:")
    assert [line.split()[1] for line in out[2:-1]] == ALL
    assert all(line.startswith("SKIP  " if line.split()[1] in OPTIONAL else "PASS  ") for line in out[2:-1])
    assert out[-1] == f"{len(SUITE) - 2} passed, 0 failed, 2 skipped"
    assert {case: outcomes.pop(case) for case in OPTIONAL} == dict.fromkeys(OPTIONAL, "skipped")
    assert set(outcomes.values()) == {"passed"}


@pytest.mark.parametrize("mode", sorted(BROKEN))
def test_a_broken_mock_fails_exactly_the_cases_of_its_rule(mode, tmp_path, capsys):
    code, outcomes = _run(mock(mode), tmp_path)
    out, err = capsys.readouterr()

    assert code == 1, out + err
    assert _failing(outcomes) == BROKEN[mode]
    assert {case for case, outcome in outcomes.items() if outcome == "passed"} == set(ALL) - BROKEN[mode] - OPTIONAL
    for case_id in BROKEN[mode]:
        assert re.search(rf"^FAIL  {re.escape(case_id)} ", out, re.MULTILINE)
    assert out.splitlines()[-1] == \
        f"{len(SUITE) - len(BROKEN[mode]) - 2} passed, {len(BROKEN[mode])} failed, 2 skipped"


@pytest.mark.parametrize("flaw", sorted(FLAWS))
def test_a_pyjwt_backend_with_one_flaw_fails_exactly_its_case(flaw, tmp_path, capsys):
    # The subject check would refuse a token with no sub anyway, so that flaw shows on a shared tool.
    tool = PRODUCTS if flaw == "sub-optional" else ORDERS
    algorithm = FLAW_ALGORITHMS.get(flaw, "ES256")
    code, outcomes = _run(reference(flaw, algorithm=algorithm), tmp_path, "--algorithm", algorithm, tool=tool)
    out = capsys.readouterr().out

    assert code == 1, out
    assert _failing(outcomes) == {FLAWS[flaw]}, out[out.find("Failures:"):]
    assert not [case for case, outcome in outcomes.items() if outcome == "errored"]
    assert re.search(rf"^FAIL  {re.escape(FLAWS[flaw])} ", out, re.MULTILINE)
    if flaw in SAYS:
        assert re.search(SAYS[flaw], out), out[out.find("Failures:"):]


def test_when_nothing_is_accepted_every_other_case_errors_rather_than_passes(tmp_path, capsys):
    # The backend trusts an issuer that is not the kit's: it refuses the correct call too.
    code, outcomes = _run(lambda issuer: ReferenceBackend(f"http://127.0.0.1:{free_port()}"), tmp_path)
    out = capsys.readouterr().out

    assert code == 1
    assert outcomes.pop("endpoint/valid-call-accepted") == "failed"
    assert {case: outcomes.pop(case) for case in OPTIONAL} == dict.fromkeys(OPTIONAL, "skipped")
    assert set(outcomes.values()) == {"errored"}
    assert "error: nothing was accepted, so a refusal proves nothing: a correctly signed call got HTTP 401" in out
    assert "likely cause: the endpoint never fetched http://127.0.0.1:" in out
    assert out.splitlines()[-1] == f"0 passed, {len(SUITE) - 2} failed, 2 skipped"


def test_a_shared_tool_skips_the_subject_binding_and_says_why(tmp_path, capsys):
    code, outcomes = _run(reference(), tmp_path, tool=PRODUCTS)
    out = capsys.readouterr().out
    assert code == 0
    assert outcomes["endpoint/other-subject-rejected"] == "skipped"
    assert "SKIP  endpoint/other-subject-rejected" in out
    assert out.splitlines()[-1] == f"{len(SUITE) - 3} passed, 0 failed, 3 skipped"


def test_a_404_for_another_persons_url_counts_only_when_that_persons_own_call_is_taken(tmp_path, capsys):
    hides = reference(people=["alice", "bob"], not_yours=404)
    code, outcomes = _run(hides, tmp_path, "--subject", "alice", "--other-subject", "bob")
    assert (code, outcomes["endpoint/other-subject-rejected"]) == (0, "passed")

    code, outcomes = _run(hides, tmp_path, "--subject", "alice")  # the default other person is unknown
    out = capsys.readouterr().out
    assert (code, outcomes["endpoint/other-subject-rejected"]) == (1, "errored")
    assert "so that 404 proves nothing: name a second person it knows with --other-subject" in out


def test_every_case_fails_against_some_broken_backend():
    assert set(BROKEN) == set(BROKEN_MODES)
    # The approval and replay cases fail against backends not refusing such calls (below).
    covered = set().union(*BROKEN.values(), FLAWS.values()) | {"endpoint/valid-call-accepted", APPROVAL, REPLAY}
    assert covered == set(ALL)


def test_a_kept_key_lets_back_to_back_runs_pass_against_one_backend(tmp_path, capsys):
    key_file = str(tmp_path / "kit-key.pem")
    jwks_port = free_port()
    command = ["--jwks-port", str(jwks_port), "--key-file", key_file, "--rotation-wait", ROTATION_WAIT]
    with serving(ReferenceBackend(f"http://127.0.0.1:{jwks_port}", cooldown=COOLDOWN)) as base:
        first = main(["endpoint", "--url", f"{base}/products", "--method", "GET", "--tool",
                      "search_products", *command])
        second = main(["endpoint", "--url", f"{base}/products", "--method", "GET", "--tool",
                       "search_products", *command])
    assert (first, second) == (0, 0), capsys.readouterr().out
    assert oct(Path(key_file).stat().st_mode & 0o777) == "0o600"


def test_the_untrusted_issuer_listens_where_it_is_told(tmp_path, capsys):
    port = free_port()
    code, _ = _run(mock(), tmp_path, "--untrusted-port", str(port), "--case", "endpoint/wrong-issuer")
    assert code == 0
    assert capsys.readouterr().out.splitlines()[1].startswith(f"untrusted: http://127.0.0.1:{port} ")


def test_python_m_conformance_runs_the_suite_and_writes_junit(tmp_path):
    jwks_port = free_port()
    with serving(ReferenceBackend(f"http://127.0.0.1:{jwks_port}", "typ-ignored", COOLDOWN)) as base:
        done = subprocess.run(
            [sys.executable, "-m", "conformance", "endpoint", "--url", f"{base}/users/{{subject}}/orders",
             "--method", "GET", "--tool", "get_orders", "--jwks-port", str(jwks_port),
             "--rotation-wait", ROTATION_WAIT, "--junit", str(tmp_path / "r.xml")],
            cwd=REPO, capture_output=True, text=True, timeout=60)

    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stderr == ""  # patched by __main__, so no note about running one at a time
    assert done.stdout.splitlines()[-1] == f"{len(SUITE) - 3} passed, 1 failed, 2 skipped"
    suite = ET.parse(tmp_path / "r.xml").getroot().find("testsuite")
    failed = [case.get("name") for case in suite.findall("testcase") if case.find("failure") is not None]
    assert failed == ["endpoint/session-token-rejected"]


# A tool that requires the person's approval (--requires-approval): the kit's correct calls carry an approval claim.

@pytest.mark.parametrize("backend", [mock(requires_approval=(ORDERS[1],)), reference(requires_approval=True)],
                         ids=["mock", "pyjwt"])
def test_a_backend_refusing_calls_without_approval_passes_every_case(backend, tmp_path, capsys):
    code, outcomes = _run(backend, tmp_path, "--requires-approval")
    out = capsys.readouterr().out.splitlines()

    assert code == 0, "\n".join(out)
    assert out[2] == "approval: get_orders requires the person's approval, so every correct call carries an " \
                     "approval claim"
    assert outcomes.pop(REPLAY) == "skipped" and set(outcomes.values()) == {"passed"}
    assert out[-1] == f"{len(SUITE) - 1} passed, 0 failed, 1 skipped"


def test_a_mock_not_told_the_tool_requires_approval_fails_the_approval_case(tmp_path, capsys):
    code, outcomes = _run(mock(), tmp_path, "--requires-approval", "--skip", "endpoint/key-rotation")
    out = capsys.readouterr().out

    assert code == 1
    assert _failing(outcomes) == {APPROVAL}
    for attempt in ("no approval claim", "approval claim is empty", "approval claim is null"):
        assert re.search(rf"- answer to an assertion (with|whose) {attempt}\n +expected: 401 or 403\n +actual: +HTTP 200",
                         out), out[out.find("Failures:"):]


def test_a_backend_refusing_everything_fails_the_approval_case_rather_than_passing(tmp_path, capsys):
    # It trusts an issuer that is not the kit's, so it refuses the call with an approval claim too.
    elsewhere = lambda issuer: ReferenceBackend(f"http://127.0.0.1:{free_port()}", requires_approval=True)  # noqa: E731
    code, outcomes = _run(elsewhere, tmp_path, "--requires-approval", "--case", APPROVAL)
    out = capsys.readouterr().out

    assert (code, outcomes) == (1, {APPROVAL: "failed"})
    assert re.search(r"- answer to a correct call carrying an approval claim\n +expected: 2xx\n +actual: +HTTP 401 ", out)


def test_a_mock_told_the_tool_requires_approval_refuses_the_kit_until_it_is_told_too(tmp_path, capsys):
    code, outcomes = _run(mock(requires_approval=(ORDERS[1],)), tmp_path, "--case", "endpoint/valid-call")
    out = capsys.readouterr().out

    assert (code, outcomes) == (1, {"endpoint/valid-call-accepted": "failed"})
    assert "likely cause: the endpoint's answer mentions an approval: if the tool requires the person's approval, " \
           "say --requires-approval" in out


# An endpoint taking each assertion once (--single-use), as docs/approvals.md advises for a consequential tool.

@pytest.mark.parametrize("backend", [mock(single_use=(ORDERS[1],)), reference(single_use=True)], ids=["mock", "pyjwt"])
def test_a_backend_taking_each_assertion_once_passes_every_case(backend, tmp_path, capsys):
    code, outcomes = _run(backend, tmp_path, "--single-use")
    out = capsys.readouterr().out

    assert code == 0, out
    assert outcomes.pop(APPROVAL) == "skipped" and set(outcomes.values()) == {"passed"}


@pytest.mark.parametrize("backend", [mock(), reference()], ids=["mock", "pyjwt"])
def test_a_backend_taking_an_assertion_twice_fails_the_replay_case(backend, tmp_path, capsys):
    code, outcomes = _run(backend, tmp_path, "--single-use", "--skip", "endpoint/key-rotation")
    out = capsys.readouterr().out

    assert code == 1
    assert _failing(outcomes) == {REPLAY}
    assert re.search(r"- answer to that same assertion sent again \(its jti already taken\)\n +expected: 401 or 403\n"
                     r" +actual: +HTTP 200", out), out[out.find("Failures:"):]


# The organization's algorithm (--algorithm): the kit signs, and forges, in it.

def test_a_backend_pinning_es256_refuses_an_eddsa_organizations_calls(tmp_path, capsys):
    # The docs' snippets pinned ES256 for everyone: an EdDSA organization's backend copying them accepts nothing.
    code, outcomes = _run(reference(algorithm="ES256"), tmp_path, "--algorithm", "EdDSA", "--case",
                          "endpoint/valid-call")
    out = capsys.readouterr().out
    assert (code, outcomes) == (1, {"endpoint/valid-call-accepted": "failed"})
    assert "it signs with EdDSA" in out


def test_the_mock_pinned_to_one_algorithm_refuses_another(tmp_path, capsys):
    code, outcomes = _run(mock(algorithms=["ES256"]), tmp_path, "--algorithm", "RS256", "--case", "endpoint/valid-call")
    assert (code, outcomes) == (1, {"endpoint/valid-call-accepted": "failed"})
    code, outcomes = _run(mock(), tmp_path, "--algorithm", "RS256", "--case", "endpoint/valid-call")
    assert (code, outcomes) == (0, {"endpoint/valid-call-accepted": "passed"})  # unpinned: the key's JWK decides


def test_every_endpoint_case_has_a_row_in_the_docs_with_a_pyjwt_and_a_jose_fix():
    rows = [line for line in (REPO / "docs" / "conformance.md").read_text().splitlines() if line.startswith("| ")]
    for case in SUITE:
        row = next((r for r in rows if f"| `{case.id}` |" in r), None)
        assert row is not None, f"docs/conformance.md has no row for {case.id}"
        assert len([cell for cell in row.strip("|").split(" | ") if cell.strip()]) == 5, row
