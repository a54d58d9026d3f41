"""docs/architecture.md's picture of the layers is generated from pyproject.toml's import-linter contracts, so it
cannot drift from what the suite enforces (tests/test_layers.py). `python -m tests.test_architecture_doc` rewrites it."""
from __future__ import annotations

import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCUMENT = ROOT / "docs" / "architecture.md"
BEGIN = "<!-- generated from pyproject.toml's import-linter contracts by `python -m tests.test_architecture_doc` -->"
END = "<!-- end of the generated contracts -->"


def contracts_text() -> str:
    """The contracts as architecture.md shows them: the layers top to bottom, then each forbidden contract."""
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]["contracts"]
    lines = []
    for contract in contracts:
        if contract["type"] == "layers":
            lines += [f"{contract['name']} (in {', '.join(contract['containers'])}, top to bottom):", "", "```"]
            lines += [f"  {layer}" for layer in contract["layers"]]
            lines += ["```", ""]
    lines.append("Forbidden imports:")
    lines.append("")
    for contract in contracts:
        if contract["type"] == "forbidden":
            sources = ", ".join(f"`{m}`" for m in contract["source_modules"])
            forbidden = ", ".join(f"`{m}`" for m in contract["forbidden_modules"])
            lines.append(f"- {contract['name']}: {sources} may not import {forbidden}.")
    return "\n".join([BEGIN, "", *lines, "", END])


def _current(text: str) -> str:
    return text[text.index(BEGIN):text.index(END) + len(END)]


def test_the_layers_architecture_shows_are_the_contracts():
    text = DOCUMENT.read_text(encoding="utf-8")
    assert _current(text) == contracts_text(), "docs/architecture.md is stale: run python -m tests.test_architecture_doc"


if __name__ == "__main__":
    text = DOCUMENT.read_text(encoding="utf-8")
    DOCUMENT.write_text(text.replace(_current(text), contracts_text()), encoding="utf-8")
    sys.exit(0)
