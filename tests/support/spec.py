"""The spec's text, and Toolgate's own promises beside it, as the tests that hold our words to them read it."""

import os
from pathlib import Path

import pytest

from tests.support.constants import REPO

#: Where the spec may be: named in TOOLGATE_SPEC_ROOT, carried by the checkout, or `shared/` beside it (as here).
SPEC_ROOTS = [Path(p) for p in [os.environ.get("TOOLGATE_SPEC_ROOT", "")] if p] + \
    [REPO, REPO / "docs", REPO.parent / "shared"]
SPEC_FILES = ("spec/defining-a-tool.txt", "spec/how-tools-run.txt", "THREATS.md")
#: What Toolgate promises beyond the spec, in documents of its own: the kit's cases quote them as they quote the spec,
#: and its traceability map covers every sentence of them too.
PROMISE_FILES = ("docs/approvals.md",)


def spec_root() -> Path:
    """The folder holding `spec/` (and THREATS.md). Without it a test skips; under CI (`CI` set) it fails, so the
    tests that hold our words to the spec's cannot pass unseen."""
    for root in SPEC_ROOTS:
        if all((root / name).is_file() for name in SPEC_FILES):
            return root
    message = f"the spec's text is not in any of {', '.join(map(str, SPEC_ROOTS))} (set TOOLGATE_SPEC_ROOT)"
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


def requirement_text(name: str) -> str:
    """The text of a file the kit's cases quote: one of the spec's (under `spec_root`) or one of Toolgate's own."""
    root = REPO if name in PROMISE_FILES else spec_root()
    return (root / name).read_text(encoding="utf-8")
