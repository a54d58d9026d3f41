"""The traceability map: every sentence of `spec/`, THREATS.md and docs/approvals.md and the cases that check it, or
why none can.

conformance/traceability.json lists, file by file and in the text's own order, every sentence the
spec and the threat model say (headings aside), and those of docs/approvals.md, where Toolgate
states what it promises beyond the spec about calls that wait for the person's approval, each with
the case ids that observe it (of either suite: `endpoint/…` for what an integrator's backend must
do, the platform's areas for the rest), or the name of a written reason why no case can (advice to
the integrator, a screen of the dashboard, a safeguard only the service's own tests can provoke,
…). `problems` compares the map with the texts and the suites: a sentence the map lacks, a
sentence it has that the text no longer says, a case it names that does not exist, or a case it
never names all count, so the map cannot drift from either.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

TRACEABILITY_FILE = Path(__file__).resolve().parents[1] / "traceability.json"

_BULLET = re.compile(r"^(?:•|- )\s*")  # the spec's bullets, and Markdown's
# A sentence ends at . ! ? or a closing quote after one, before the capital, quote or brace of the next.
_BOUNDARY = re.compile(r"(?<=[.!?”])\s+(?=[A-Z“{])")
_ENDS_A_SENTENCE = re.compile(r"[.:!?”)]$")
#: A bullet's first "sentence" this short is its label, not a sentence of its own.
_LABEL_WORDS = 3


def spec_sentences(text: str) -> list[str]:
    """Every sentence of a spec file, in order: bullets and table rows count, headings do not.

    A heading is a Markdown heading (`#`), or a line with no tab that neither ends like a sentence
    nor starts an example.
    A table row (tab-separated) is one sentence, tabs kept. A bullet's short label stays with the
    sentence after it.
    """
    sentences: list[str] = []
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        if line.startswith("#"):
            continue
        if "\t" in line:
            sentences.append(line)
            continue
        if not _ENDS_A_SENTENCE.search(line) and not line.startswith("{"):
            continue
        parts = [part.strip() for part in _BOUNDARY.split(_BULLET.sub("", line)) if part.strip()]
        if _BULLET.match(line) and len(parts) > 1 and len(parts[0].split()) <= _LABEL_WORDS:
            parts[:2] = [f"{parts[0]} {parts[1]}"]  # a bullet's label ("Tool name.") opens its first sentence
        sentences.extend(parts)
    return sentences


@dataclass(frozen=True)
class Entry:
    """One spec sentence: the cases observing it, or the name of the reason none can."""

    file: str
    sentence: str
    cases: tuple[str, ...]
    reason: str | None


def load(path: Path = TRACEABILITY_FILE) -> tuple[list[Entry], dict[str, str]]:
    """The map's entries, file by file in order, and its reasons by name."""
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    entries = [Entry(file, item["sentence"], tuple(item.get("cases", ())), item.get("reason"))
               for file, items in data["files"].items() for item in items]
    return entries, dict(data["reasons"])


def problems(entries: list[Entry], reasons: dict[str, str], spec: dict[str, str],
             case_ids: Iterable[str]) -> list[str]:
    """Every way the map and the spec's text (`spec`: file → text) or the suite's cases disagree."""
    found: list[str] = []
    known = list(case_ids)
    for file, text in spec.items():
        mapped = [e.sentence for e in entries if e.file == file]
        said = spec_sentences(text)
        found += [f"{file}: the spec says, the map lacks: {s!r}" for s in said if s not in mapped]
        found += [f"{file}: the map has, the spec does not say: {s!r}" for s in mapped if s not in said]
        if not found and mapped != said:
            found.append(f"{file}: the map's sentences are not in the spec's order")
    found += [f"{e.file}: {e.sentence!r} maps to no case and gives no reason"
              for e in entries if not e.cases and not e.reason]
    found += [f"{e.file}: {e.sentence!r} names both cases and a reason" for e in entries if e.cases and e.reason]
    found += [f"{e.file}: {e.sentence!r} names the unknown reason {e.reason!r}"
              for e in entries if e.reason and e.reason not in reasons]
    found += [f"{e.file}: {e.sentence!r} names the unknown case {c!r}"
              for e in entries for c in e.cases if c not in known]
    named = {c for e in entries for c in e.cases}
    found += [f"the case {c} traces to no spec sentence" for c in known if c not in named]
    used = {e.reason for e in entries}
    found += [f"the reason {r!r} is never used" for r in reasons if r not in used]
    return found
