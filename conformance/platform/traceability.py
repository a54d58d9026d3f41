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

A sentence that promises several things, not all checked by the same cases, lists its `parts`
instead, each with its cases or its reason: "JWKS clients cache with a lifetime" checked by one
case, "cap the response size" unobservable for a stated reason. The parts must be faithful to the
sentence (`part_problems`): each is a verbatim piece of it, they come in its order without
overlapping, and what lies between them (and around them) is only glue: spaces, punctuation and
the words "and" and "or". So every clause of the sentence sits in exactly one part, and a part can
be neither left out nor reworded.
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
#: What may lie between a sentence's parts: punctuation, spaces, and these joining words.
_GLUE_WORDS = frozenset({"and", "or"})
_WORD = re.compile(r"[^\s,;:.!?()—–-]+")


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
class Part:
    """A piece of a sentence, quoted verbatim, and the cases observing it or the name of the reason none can."""

    text: str
    cases: tuple[str, ...]
    reason: str | None


@dataclass(frozen=True)
class Entry:
    """One spec sentence: the cases observing it, or the name of the reason none can, or its parts, each with
    cases or a reason of its own."""

    file: str
    sentence: str
    cases: tuple[str, ...]
    reason: str | None
    parts: tuple[Part, ...] = ()

    def mappings(self) -> list[tuple[str, tuple[str, ...], str | None]]:
        """(what, cases, reason) for the sentence, or for each part when it has parts."""
        if self.parts:
            return [(f"{self.sentence!r}, its part {p.text!r},", p.cases, p.reason) for p in self.parts]
        return [(repr(self.sentence), self.cases, self.reason)]


def load(path: Path = TRACEABILITY_FILE) -> tuple[list[Entry], dict[str, str]]:
    """The map's entries, file by file in order, and its reasons by name."""
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    entries = [Entry(file, item["sentence"], tuple(item.get("cases", ())), item.get("reason"),
                     tuple(Part(p["part"], tuple(p.get("cases", ())), p.get("reason")) for p in item.get("parts", ())))
               for file, items in data["files"].items() for item in items]
    return entries, dict(data["reasons"])


def part_problems(entry: Entry) -> list[str]:
    """How `entry`'s parts fail to be the sentence, split: each a verbatim piece, in order, not overlapping, with only
    glue (spaces, punctuation, "and", "or") left between and around them; and a sentence split has no cases or
    reason of its own."""
    if not entry.parts:
        return []
    where = f"{entry.file}: {entry.sentence!r}"
    found = []
    if entry.cases or entry.reason:
        found.append(f"{where} has parts, and cases or a reason of its own besides")
    if len(entry.parts) < 2:
        found.append(f"{where} is split into fewer than two parts")
    at, gaps = 0, []
    for part in entry.parts:
        start = entry.sentence.find(part.text, at) if part.text.strip() else -1
        if start < 0:
            found.append(f"{where}: the part {part.text!r} is not a piece of the sentence after the part before it")
            continue
        gaps.append(entry.sentence[at:start])
        at = start + len(part.text)
    gaps.append(entry.sentence[at:])
    for gap in gaps:
        words = [word for word in _WORD.findall(gap) if word.lower() not in _GLUE_WORDS]
        if words:
            found.append(f"{where}: no part holds {gap.strip()!r}")
    return found


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
    found += [problem for e in entries for problem in part_problems(e)]
    mapped_to = [(e.file, what, cases, reason) for e in entries for what, cases, reason in e.mappings()]
    found += [f"{file}: {what} maps to no case and gives no reason"
              for file, what, cases, reason in mapped_to if not cases and not reason]
    found += [f"{file}: {what} names both cases and a reason" for file, what, cases, reason in mapped_to
              if cases and reason]
    found += [f"{file}: {what} names the unknown reason {reason!r}"
              for file, what, _, reason in mapped_to if reason and reason not in reasons]
    found += [f"{file}: {what} names the unknown case {c!r}"
              for file, what, cases, _ in mapped_to for c in cases if c not in known]
    named = {c for _, _, cases, _ in mapped_to for c in cases}
    found += [f"the case {c} traces to no spec sentence" for c in known if c not in named]
    used = {reason for _, _, _, reason in mapped_to}
    found += [f"the reason {r!r} is never used" for r in reasons if r not in used]
    return found
