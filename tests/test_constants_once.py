"""A number the platform names is named in one module: the same name bound to a number in two modules of `service`
or `serving` is either one fact written twice (make it one, in service/limits.py or where it belongs) or two facts
under one name (name them apart). Issue 32 found four such: the stop grace, the page sizes, the detail cap."""
from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def named_numbers(*packages: str, root: Path = REPO) -> dict[str, list[str]]:
    """Each module-level CONSTANT (a leading underscore ignored) bound to a number literal, to where it is bound."""
    found: dict[str, list[str]] = defaultdict(list)
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            for node in ast.parse(path.read_text(encoding="utf-8")).body:
                targets = node.targets if isinstance(node, ast.Assign) else \
                    [node.target] if isinstance(node, ast.AnnAssign) else []
                value = getattr(node, "value", None)
                if not (isinstance(value, ast.Constant) and type(value.value) in (int, float)):
                    continue
                for target in targets:
                    if isinstance(target, ast.Name) and target.id.lstrip("_").isupper():
                        found[target.id.lstrip("_")].append(f"{path.relative_to(root)}:{node.lineno}")
    return found


def test_each_named_number_is_bound_in_one_module():
    twice = {name: where for name, where in named_numbers("service", "serving").items() if len(where) > 1}
    assert not twice


def test_the_check_sees_a_number_named_twice(tmp_path):
    (tmp_path / "probe").mkdir()
    (tmp_path / "probe" / "one.py").write_text("PAGE_SIZE = 50\n")
    (tmp_path / "probe" / "two.py").write_text("_PAGE_SIZE: int = 50\nOTHER = 'x'\n")
    assert named_numbers("probe", root=tmp_path) == {"PAGE_SIZE": ["probe/one.py:1", "probe/two.py:1"]}
