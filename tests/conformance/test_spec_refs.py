"""Every case quotes its spec passage (or the passage of Toolgate's own promises beyond the spec) verbatim, so a
reference cannot drift from the text."""
from __future__ import annotations

import pytest

from conformance.cli import SUITES, load_suite
from tests.support.spec import requirement_text

CASES = [case for name in SUITES for case in load_suite(name).SUITE]


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.id)
def test_every_quoted_phrase_appears_in_its_file(case):
    for ref in case.spec:
        text = requirement_text(ref.file)
        assert ref.quote in text, f"{case.id}: {ref.file} does not say {ref.quote!r}"
