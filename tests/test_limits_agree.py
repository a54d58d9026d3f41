"""The outsiders' copies of the spec's numbers agree with the platform's `service/limits.py`.

The conformance kit and the mock backend check a platform from outside, so each keeps its own
`limits` module rather than importing the service's; this is what keeps those copies honest.
"""
from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

import service.limits

#: Each outsider's limits module, and the spec's numbers it must carry.
COPIES = {
    "conformance.limits": {"CALL_DEADLINE_SECONDS", "RESPONSE_CAP_CHARS", "ASSERTION_LIFETIME_SECONDS"},
    "mock_backend.limits": {"ASSERTION_LIFETIME_SECONDS", "CLOCK_SKEW_SECONDS"},
}
REPO = Path(__file__).resolve().parents[1]


def _constants(module) -> dict[str, object]:
    return {name: value for name, value in vars(module).items() if name.isupper()}


@pytest.mark.parametrize("name", sorted(COPIES))
def test_every_copied_number_equals_the_platforms(name):
    copy, platform = _constants(importlib.import_module(name)), _constants(service.limits)
    assert COPIES[name] <= set(copy), f"{name} lacks {sorted(COPIES[name] - set(copy))}"
    shared = set(copy) & set(platform)
    assert COPIES[name] <= shared
    assert {n: copy[n] for n in shared} == {n: platform[n] for n in shared}


@pytest.mark.parametrize("package", ["conformance", "mock_backend"])
def test_the_outsiders_spell_the_copied_numbers_only_in_their_limits_module(package):
    """A number of the spec written as a literal elsewhere in an outsider would escape the check above.

    Only numbers distinctive enough to search for (the cap): a 5 or a 30 is as often something else."""
    numbers = {v for v in (getattr(service.limits, n) for n in set().union(*COPIES.values())) if v > 1_000}
    assert numbers == {service.limits.RESPONSE_CAP_CHARS}
    found = []
    for path in (REPO / package).rglob("*.py"):
        if path.name == "limits.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and type(node.value) in (int, float) and node.value in numbers:
                found.append(f"{path.relative_to(REPO)}:{node.lineno}: {node.value!r}")
    assert found == []


def test_the_outsiders_pin_the_assertion_typ_the_platform_mints():
    """Not a number, but the same kind of copy: the `typ` the mock and the kit hold an assertion to."""
    from conformance.tokens import ASSERTION_TYPE as kit
    from mock_backend.verify import ASSERTION_TYPE as mock
    from service.keys import ASSERTION_TYPE as platform

    assert mock == kit == platform
