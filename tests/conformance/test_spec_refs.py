"""Every case quotes its spec passage verbatim, so a reference cannot drift from the text."""
from __future__ import annotations

import pytest

from conformance.cli import SUITES, load_suite
from tests.helpers import spec_root

CASES = [case for name in SUITES for case in load_suite(name).SUITE]


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.id)
def test_every_quoted_phrase_appears_in_its_file(case):
    root = spec_root()
    for ref in case.spec:
        text = (root / ref.file).read_text(encoding="utf-8")
        assert ref.quote in text, f"{case.id}: {ref.file} does not say {ref.quote!r}"
