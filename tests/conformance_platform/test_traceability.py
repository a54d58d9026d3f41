"""The traceability map agrees with the spec's and the threat model's text, Toolgate's own promises beyond them, and
both suites: every sentence, every case.

The spec's text is found by tests.support.spec.spec_root (the checks of it fail, not skip, under CI).
"""
from __future__ import annotations

from conformance.endpoint import SUITE as ENDPOINT
from conformance.platform import SUITE
from conformance.platform.traceability import Entry, Part, load, part_problems, problems, spec_sentences
from tests.support.spec import PROMISE_FILES, SPEC_FILES, requirement_text

CASE_IDS = [case.id for case in SUITE] + [case.id for case in ENDPOINT]


def _spec() -> dict[str, str]:
    return {name: requirement_text(name) for name in SPEC_FILES + PROMISE_FILES}


def test_the_map_covers_every_spec_sentence_and_every_case():
    entries, reasons = load()
    assert problems(entries, reasons, _spec(), CASE_IDS) == []


def test_the_map_names_only_the_spec_and_threat_files_and_our_own_promises():
    entries, _ = load()
    assert {entry.file for entry in entries} == set(SPEC_FILES + PROMISE_FILES)


# The checker itself, on a small spec of its own: each kind of drift is caught.

SMALL_SPEC = {"spec/x.txt": "Heading\n\nThe platform does A. It also does B.\n• Label. Then C happens.\n"
                            "What\tkind\tcode\n"}
SENTENCES = ["The platform does A.", "It also does B.", "Label. Then C happens.", "What\tkind\tcode"]


def _entries(**changes) -> list[Entry]:
    cases = {"The platform does A.": ("x/a",), "It also does B.": ("x/b",), "Label. Then C happens.": ("x/a",)}
    cases.update(changes)
    return [Entry("spec/x.txt", s, cases.get(s, ()), None if s in cases else "why") for s in SENTENCES]


def test_sentences_skip_headings_keep_table_rows_and_join_bullet_labels():
    assert spec_sentences(SMALL_SPEC["spec/x.txt"]) == SENTENCES


def test_markdown_headings_are_skipped_and_its_bullets_read_as_sentences():
    text = "# Title\n\nIntro here.\n\n## Section (with a note)\n- The first point is this. Second one.\n- Third.\n"
    assert spec_sentences(text) == ["Intro here.", "The first point is this.", "Second one.", "Third."]


def test_a_faithful_small_map_has_no_problems():
    assert problems(_entries(), {"why": "because"}, SMALL_SPEC, ["x/a", "x/b"]) == []


def test_a_sentence_the_map_lacks_is_a_problem():
    found = problems(_entries()[1:], {"why": "because"}, SMALL_SPEC, ["x/a", "x/b"])
    assert found == ["spec/x.txt: the spec says, the map lacks: 'The platform does A.'"]


def test_a_sentence_the_spec_no_longer_says_is_a_problem():
    spec = {"spec/x.txt": SMALL_SPEC["spec/x.txt"].replace("It also does B.", "It also does D.")}
    found = problems(_entries(), {"why": "because"}, spec, ["x/a", "x/b"])
    assert "spec/x.txt: the map has, the spec does not say: 'It also does B.'" in found


def test_an_unknown_case_and_an_untraced_case_are_problems():
    found = problems(_entries(**{"It also does B.": ("x/gone",)}), {"why": "because"}, SMALL_SPEC, ["x/a", "x/b"])
    assert "spec/x.txt: 'It also does B.' names the unknown case 'x/gone'" in found
    assert "the case x/b traces to no spec sentence" in found


def test_a_sentence_without_cases_or_reason_and_an_unknown_reason_are_problems():
    entries = _entries()
    entries[3] = Entry("spec/x.txt", entries[3].sentence, (), None)
    assert "spec/x.txt: 'What\\tkind\\tcode' maps to no case and gives no reason" in \
        problems(entries, {"why": "because"}, SMALL_SPEC, ["x/a", "x/b"])
    found = problems(_entries(), {"other": "unused"}, SMALL_SPEC, ["x/a", "x/b"])
    assert "spec/x.txt: 'What\\tkind\\tcode' names the unknown reason 'why'" in found
    assert "the reason 'other' is never used" in found


# A sentence split into parts: each part a verbatim piece, in order, only glue between them, each mapped.

SPLIT = "It caches keys, refetches once in a cooldown, and keeps them when the server fails."


def _split(*parts: Part, **entry) -> Entry:
    return Entry("spec/y.txt", SPLIT, entry.get("cases", ()), entry.get("reason"), parts)


def _faithful() -> list[Part]:
    return [Part("It caches keys", ("x/a",), None), Part("refetches once in a cooldown", (), "why"),
            Part("keeps them when the server fails.", ("x/b",), None)]


def _split_problems(entry: Entry) -> list[str]:
    return problems([entry], {"why": "because"}, {"spec/y.txt": SPLIT}, ["x/a", "x/b"])


def test_a_sentence_split_faithfully_with_every_part_mapped_has_no_problems():
    assert _split_problems(_split(*_faithful())) == []


def test_a_clause_no_part_holds_is_a_problem():
    parts = _faithful()
    del parts[1]
    assert "spec/y.txt: 'It caches keys, refetches once in a cooldown, and keeps them when the server fails.': no " \
           "part holds ', refetches once in a cooldown, and'" in _split_problems(_split(*parts))


def test_a_reworded_or_reordered_part_is_a_problem():
    reworded = _faithful()
    reworded[1] = Part("refetches at most once in a cooldown", (), "why")
    assert any("the part 'refetches at most once in a cooldown' is not a piece of the sentence" in p
               for p in _split_problems(_split(*reworded)))
    reordered = _faithful()
    reordered[0], reordered[1] = reordered[1], reordered[0]
    assert any("the part 'It caches keys' is not a piece of the sentence after the part before it" in p
               for p in _split_problems(_split(*reordered)))


def test_an_unmapped_part_is_a_problem():
    parts = _faithful()
    parts[1] = Part(parts[1].text, (), None)
    assert "spec/y.txt: 'It caches keys, refetches once in a cooldown, and keeps them when the server fails.', its " \
           "part 'refetches once in a cooldown', maps to no case and gives no reason" in _split_problems(_split(*parts))


def test_a_split_sentence_mapped_as_a_whole_too_or_into_one_part_is_a_problem():
    assert any("has parts, and cases or a reason of its own besides" in p
               for p in _split_problems(_split(*_faithful(), cases=("x/a",))))
    assert any("is split into fewer than two parts" in p
               for p in _split_problems(_split(Part(SPLIT, ("x/a", "x/b"), None))))


def test_the_jwks_sentence_is_split_and_each_part_mapped_to_its_case_or_a_reason():
    entries, reasons = load()
    jwks = next(e for e in entries if e.sentence.startswith("JWKS clients cache with a lifetime"))
    assert {p.text: (p.cases, p.reason) for p in jwks.parts} == {
        "JWKS clients cache with a lifetime": (("endpoint/jwks-refetch-bounded",), None),
        "refetch at most once in a cooldown on an unknown `kid`":
            (("endpoint/jwks-refetch-bounded", "endpoint/key-rotation-picked-up"), None),
        "cap the response size": ((), "jwks-cap"),
        "keep verifying with cached keys when the key server fails.": (("endpoint/keys-kept-when-issuer-fails",), None),
    }
    assert part_problems(jwks) == [] and "jwks-cap" in reasons
