"""Reading an OpenAPI document: its size, JSON or YAML (safe loading only), its expansion, its version.

Every bound is checked before anything walks the document. YAML is composed into nodes first and its expansion
measured there, aliases counted again at every use, so a billion-laughs document (a few hundred bytes that stand
for billions of values) is refused before it is constructed, and a recursive alias never is. PyYAML's safe loader
builds only plain values (no tags that run code); libyaml's parser is used when PyYAML has it.
"""
from __future__ import annotations

import json
import re
from typing import Any

import yaml

from service import limits
from service.importing.bounds import Budget, refused

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
#: An anchor is `&` and a name of letters, digits, `-` and `_` (PyYAML's scanners, C and Python, take no other).
#: Text where that sequence appears nowhere, in content or not, defines no anchor, so it has no alias and its
#: expansion is what it says: it is checked as plainly as JSON. Any other text gets the node check.
_MAYBE_ANCHOR = re.compile(r"&[0-9A-Za-z_-]")
_VERSION = re.compile(r"3\.([01])(\.\d+)?([-+].*)?")
#: Values counted between two checks of the import's deadline (and whether its request is still there).
_CHECK_EVERY = 4096


def read_document(source: str | bytes, budget: Budget | None = None) -> dict[str, Any]:
    """The document as plain data, or 422 on `document`: too large, unreadable, too complex, or not OpenAPI 3.0/3.1.

    The size is checked before a byte is parsed. The values it expands to are spent from `budget`, which mapping
    its operations goes on spending from (one count for both), and whose deadline and abandonment are checked as
    the values are counted.
    """
    budget = budget or Budget()
    text = _text(source)
    stripped = text.lstrip("\ufeff \t\r\n")
    data: Any = None
    if stripped.startswith(("{", "[")):
        try:
            data = json.loads(stripped)
        except RecursionError:
            raise refused("document-too-complex") from None
        except ValueError:
            data = None  # flow-style YAML is not always JSON: let YAML read it
        else:
            budget.spend(_check_plain(data, budget))
    if data is None:
        data = _load_yaml(text, budget)
    return _check_openapi(data)


def version_of(document: dict[str, Any]) -> str:
    """"3.0" or "3.1" (read_document has checked it is one of them)."""
    version = _VERSION.fullmatch(str(document["openapi"]))
    assert version is not None  # read_document refuses any other
    return "3." + version.group(1)


def _text(source: str | bytes) -> str:
    if len(source) > limits.MAX_IMPORT_DOCUMENT_BYTES:
        raise refused("document-too-large")
    if isinstance(source, bytes):
        try:
            codec = "utf-16" if source[:2] in (b"\xff\xfe", b"\xfe\xff") else "utf-8-sig"
            return source.decode(codec)
        except UnicodeDecodeError as exc:
            raise refused("document-unreadable", detail=f"It is not UTF-8 text ({exc.reason}).") from None
    # A character is one to four bytes in UTF-8: only text near the cap needs encoding to be measured.
    if len(source) * 4 > limits.MAX_IMPORT_DOCUMENT_BYTES and len(source.encode("utf-8", "surrogatepass")) > \
            limits.MAX_IMPORT_DOCUMENT_BYTES:
        raise refused("document-too-large")
    return source


def _load_yaml(text: str, budget: Budget) -> Any:
    loader = _Loader(text)
    try:
        try:
            node = loader.get_single_node()
            if node is None:
                return None
            if _MAYBE_ANCHOR.search(text) is None:
                budget.check()
                data = loader.construct_document(node)
                budget.spend(_check_plain(data, budget))
                return data
            budget.spend(_check_nodes(node, budget))
            return loader.construct_document(node)
        except yaml.MarkedYAMLError as exc:
            if "nesting depth" in str(exc.problem):  # libyaml's own bound, far above ours
                raise refused("document-too-complex") from None
            mark = exc.problem_mark
            where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
            raise refused("document-unreadable", detail=f"{exc.problem}{where}.") from None
        except (yaml.YAMLError, ValueError, TypeError) as exc:
            raise refused("document-unreadable", detail=str(exc)[:limits.ERROR_DETAIL_CHARS]) from None
        except RecursionError:  # PyYAML's pure-Python parser, without libyaml, recurses per level
            raise refused("document-too-complex") from None
    finally:
        loader.dispose()


def _check_nodes(root: yaml.Node, budget: Budget) -> int:
    """The values a node graph expands to; refused when they are more values or levels than the bounds, or never
    end.

    An alias is the same node object as its anchor, so each node's expanded size and height are worked out once,
    from its children's: linear in the composed graph, however large its expansion. The stack holds the path being
    expanded; a node met again while it is on that path is a recursive alias.
    """
    size: dict[int, int] = {}
    height: dict[int, int] = {}
    opened: set[int] = set()
    stack = [root]
    mapping, scalar = yaml.MappingNode, yaml.ScalarNode
    while stack:
        if len(size) % _CHECK_EVERY == 0:
            budget.check()
        node = stack[-1]
        key = id(node)
        if key in size:
            stack.pop()
            continue
        if isinstance(node, scalar):
            size[key], height[key] = 1, 1
            stack.pop()
            continue
        children = [part for pair in node.value for part in pair] if isinstance(node, mapping) else node.value
        if key not in opened:
            opened.add(key)
            for child in children:
                if id(child) in opened:
                    raise refused("document-too-complex", detail="An alias refers to a value that contains it.")
                if id(child) not in size:
                    stack.append(child)
            continue
        stack.pop()
        opened.discard(key)
        size[key] = 1 + sum(size[id(c)] for c in children)
        height[key] = 1 + max((height[id(c)] for c in children), default=0)
        if size[key] > limits.MAX_IMPORT_DOCUMENT_VALUES or height[key] > limits.MAX_IMPORT_DOCUMENT_DEPTH:
            raise refused("document-too-complex")
    return size[id(root)]


def _check_plain(data: Any, budget: Budget) -> int:
    """The same bounds for JSON, which has no aliases: count values and levels as they are; how many there are."""
    count = 0
    stack = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        count += 1
        if count % _CHECK_EVERY == 0:
            budget.check()
        if count > limits.MAX_IMPORT_DOCUMENT_VALUES or depth > limits.MAX_IMPORT_DOCUMENT_DEPTH:
            raise refused("document-too-complex")
        if isinstance(value, dict):
            stack.extend((v, depth + 1) for v in value.values())
            count += len(value)  # the keys
        elif isinstance(value, list):
            stack.extend((v, depth + 1) for v in value)
    return count


def _check_openapi(data: Any) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise refused("document-not-openapi")
    if "swagger" in data:
        raise refused("swagger-unsupported")
    if "openapi" not in data:
        raise refused("document-not-openapi")
    # YAML reads an unquoted `openapi: 3.0` as a number; its text is still the version.
    if not _VERSION.fullmatch(str(data["openapi"])):
        raise refused("openapi-version-unsupported", detail=f"This one says {str(data['openapi'])[:40]!r}.")
    paths = data.get("paths")
    if paths is not None and not isinstance(paths, dict):
        raise refused("document-not-openapi", detail="Its paths are not a mapping.")
    return data
