"""The modules, functions and files the documents name exist: a name in backticks in README.md or docs/*.md that looks
like a dotted Python name of ours (`service.records.calls.call_view`, or `records.calls` inside `service`) or a file
path (`service/pool.py`, `conversations/slots.py`, `bench/RESULTS.md`) must resolve in the tree, so a rename that
forgets the documents fails here rather than misleading a reader (issue 32 found `ops.calls.call_view`, `ops.audit`).

Names are resolved by reading the source, never by importing it: an entry point patches gevent on import.
"""
from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DOCUMENTS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md")), *sorted((REPO / "bench").glob("*.md"))]
PACKAGES = ("service", "serving", "mock_backend", "conformance", "bench", "tests")
#: What a backticked path may end with to be taken for a file of ours (a URL path such as `/v1/calls` is not one).
FILE_ENDINGS = (".py", ".md", ".txt", ".json", ".toml", ".sh", ".yaml", ".yml", ".html", ".css", ".js", ".png", "/")
#: Where a relative path may start: the root, `service/` (`conversations/slots.py`), the kit (`cases/`).
BASES = (REPO, REPO / "service", REPO / "conformance")
DOTTED = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")
PATH = re.compile(r"[\w.-]+(?:/[\w.-]+)*/?")


def spans(text: str) -> list[str]:
    """Every inline code span of a Markdown text (fenced blocks left out: they hold commands and output)."""
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    return re.findall(r"`([^`\n]+)`", text)


def _module_file(parts: list[str]) -> Path | None:
    base = REPO.joinpath(*parts)
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


@cache
def _bound(path: Path) -> dict[str, ast.AST | None]:
    """The names a module binds at its top level (a class's node kept, to look inside it)."""
    names: dict[str, ast.AST | None] = {}
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names[node.name] = node
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update({(a.asname or a.name).split(".")[0]: None for a in node.names})
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update({t.id: None for t in targets if isinstance(t, ast.Name)})
    return names


def _in_class(node: ast.AST | None, name: str) -> bool:
    if not isinstance(node, ast.ClassDef):
        return False
    for item in node.body:
        if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and item.name == name:
            return True
        if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name) and item.target.id == name:
            return True
    return False


def resolves(dotted: str) -> bool:
    """Whether `a.b.c` is a module of ours, a name one binds, or a method or field of a class one defines."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        module = _module_file(parts[:cut])
        if module is None:
            continue
        rest = parts[cut:]
        if not rest:
            return True
        bound = _bound(module)
        if rest[0] not in bound:
            return False
        return len(rest) == 1 or (len(rest) == 2 and _in_class(bound[rest[0]], rest[1]))
    return False


@cache
def logger_names() -> set[str]:
    """The loggers' names (`service.request`, …), which look like dotted names: the `*_LOGGER` texts of records/logs.py."""
    tree = ast.parse((REPO / "service" / "records" / "logs.py").read_text(encoding="utf-8"))
    return {node.value.value for node in tree.body if isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
            and any(isinstance(t, ast.Name) and t.id.endswith("_LOGGER") for t in node.targets)}


def _ours(path: str) -> bool:
    """Whether a backticked path is one of the tree's: a file (it has a suffix), or under a folder the tree has. A
    bare file name (`rules.py`) is read beside the package its sentence names, so it is left alone; the spec
    (`spec/…`) lives outside the tree, in ../shared/; case areas (`rule/`, `failure/`) are no folders."""
    if "/" not in path or path.startswith(("spec/", ".", "/")) or not path.endswith(FILE_ENDINGS):
        return False
    first = path.split("/")[0]
    return "." in path.rstrip("/").rsplit("/", 1)[-1] or any((base / first).is_dir() for base in BASES)


def names_of(document: Path) -> tuple[list[str], list[str]]:
    """The dotted names and the file paths `document` names, as the tree would spell them."""
    dotted, paths = [], []
    for span in spans(document.read_text(encoding="utf-8")):
        span = span.strip()
        if span in logger_names():
            continue
        if PATH.fullmatch(span) and _ours(span):
            paths.append(span)
        elif DOTTED.fullmatch(span) and not span.endswith(FILE_ENDINGS):
            first = span.split(".")[0]
            if first in PACKAGES:
                dotted.append(span)
            elif _module_file(["service", first]) or (REPO / "service" / first).is_dir():
                dotted.append(f"service.{span}")
    return dotted, paths


def path_exists(path: str, document: Path) -> bool:
    """Whether `path` is a file or folder of the tree, from its root, from `service/`, or beside `document`."""
    return any((base / path).exists() for base in (*BASES, document.parent))


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: str(p.relative_to(REPO)))
def test_every_name_a_document_gives_exists(document):
    dotted, paths = names_of(document)
    missing = [n for n in dotted if not resolves(n)] + [p for p in paths if not path_exists(p, document)]
    assert not missing, f"{document.relative_to(REPO)} names what the tree does not hold: {missing}"


def test_the_check_sees_a_name_or_a_path_that_is_gone(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("Rows are `ops.calls.call_view`, kept by `records.calls.call_view` in `service/pool.py`;\n"
                    "the trail is `ops.audit`, the pool `service/pools.py`; `os.environ` and `/v1/calls` are not ours.\n")
    dotted, paths = names_of(page)
    assert [n for n in dotted if not resolves(n)] == ["service.ops.calls.call_view", "service.ops.audit"]
    assert [p for p in paths if not path_exists(p, page)] == ["service/pools.py"]
