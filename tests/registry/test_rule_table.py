"""One rule table: every violation the service builds takes its sentence from `service.catalogue.RULES`.

Structural, over the source: a `Violation(...)` spelled out with its own sentence, or a `ServiceError` whose code is
a rule id but whose message is another sentence, would give one rule two sentences (as `project-no-draft` had).
"""
import ast
import functools
from pathlib import Path

import pytest

import service
from service.catalogue import RULES

SERVICE = Path(service.__file__).parent

#: Refusals that are not rules of a definition or a request: a credential not accepted at sign-in, and a token the
#: playground could not mint (its sentence is the signer's own); and the editor's gathering of one error field's or
#: one outcome message's violation under the input holding them all, its table sentence prefixed by the item.
ELSEWHERE = {"dashboard/account.py", "dashboard/playground.py", "dashboard/shaping.py"}


#: The names whose calls the tests below read.
SCANNED = ("violation", "Violation", "ServiceError", "refusal")


@functools.lru_cache(maxsize=None)
def _calls_by_name() -> dict[str, list[tuple[str, ast.Call]]]:
    """Every call in the service's source files that spell a scanned name, by the name called (a function or a
    method), walked once; a file that never spells one cannot call it, and is not parsed."""
    found: dict[str, list[tuple[str, ast.Call]]] = {}
    for path in sorted(SERVICE.rglob("*.py")):
        where, text = str(path.relative_to(SERVICE)), path.read_text(encoding="utf-8")
        if not any(name in text for name in SCANNED):
            continue
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Call):
                called = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
                found.setdefault(called, []).append((where, node))
    return found


def calls(name):
    """(file, call) for every call of `name` (one of SCANNED: a function or a method) in the service's source."""
    assert name in SCANNED, name
    return iter(_calls_by_name().get(name, []))


def literal(node):
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def argument(call, position, keyword):
    if len(call.args) > position:
        return call.args[position]
    return next((k.value for k in call.keywords if k.arg == keyword), None)


def test_the_scan_sees_the_calls_it_checks():
    assert len(list(calls("violation"))) > 50 and list(calls("Violation")) and list(calls("ServiceError"))


def test_no_violation_is_worded_outside_the_rule_table():
    worded = [(where, ast.unparse(call)) for where, call in calls("Violation")
              if isinstance(argument(call, 2, "message"), (ast.Constant, ast.JoinedStr)) and where not in ELSEWHERE]
    assert worded == []


@pytest.mark.parametrize("function, position", [("violation", 1), ("refusal", 0)])
def test_every_rule_named_in_the_source_is_in_the_table(function, position):
    named = {(where, literal(argument(call, position, "rule"))) for where, call in calls(function)}
    assert {(where, rule) for where, rule in named if rule is not None and rule not in RULES} == set()


def test_no_error_code_that_is_a_rule_carries_another_sentence():
    """A refusal without violations lists its code as the rule, so its message must be that rule's sentence."""
    clashes = []
    for where, call in calls("ServiceError"):
        code, message = literal(argument(call, 1, "code")), argument(call, 2, "message")
        if code in RULES and not (isinstance(message, ast.Attribute) and message.attr == "message"):
            clashes.append((where, code, ast.unparse(message)))
    assert clashes == []


def test_each_sentence_names_one_rule():
    by_sentence = {}
    for rule_id, sentence in RULES.items():
        by_sentence.setdefault(sentence, []).append(rule_id)
    assert {s: ids for s, ids in by_sentence.items() if len(ids) > 1} == {}
