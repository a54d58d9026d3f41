"""Local `$ref`s, followed on demand with loops and depth bounded; a reference to another document is refused.

References are resolved where the mapping reads them, never by expanding the whole document: a schema that refers
to itself through its properties (a category with a parent category) is ordinary and costs nothing, because the
mapping reads one level of fields. What is refused is a chain of `$ref`s that never reaches a value.
"""
from __future__ import annotations

from typing import Any
from urllib.parse import unquote

from service import limits
from service.importing.bounds import Budget

#: Sibling keywords a `$ref` may carry that describe the use rather than the value (OpenAPI 3.1 allows them, and 3.0
#: documents write them anyway); they are kept over the target's.
KEPT_SIBLINGS = ("description", "summary")


class RefError(Exception):
    """A `$ref` that cannot be followed: `rule` says why (ref-remote, ref-loop, ref-unresolved)."""

    def __init__(self, rule: str, ref: Any) -> None:
        super().__init__(f"{rule}: {ref!r}")
        self.rule = rule
        self.ref = str(ref)[:200]


class Resolver:
    """Follows `$ref`s within one document, each hop spent from the import's budget.

    `memo` holds what the mapping has worked out once per reference of this document (`schemas.flatten`), so a
    schema used in many places is expanded once.
    """

    def __init__(self, document: dict[str, Any], budget: Budget | None = None) -> None:
        self.document = document
        self.budget = budget or Budget()
        self.memo: dict[Any, Any] = {}

    def resolve(self, node: Any) -> Any:
        """The value `node` stands for: itself, or the end of its `$ref` chain with the kept siblings laid over it.

        Raises RefError for a remote reference, a loop, a chain past MAX_IMPORT_REF_HOPS or a dangling pointer.
        """
        seen: list[str] = []
        kept: dict[str, Any] = {}
        while isinstance(node, dict) and "$ref" in node:
            ref = node["$ref"]
            for key in KEPT_SIBLINGS:
                if key in node and key not in kept:
                    kept[key] = node[key]
            if not isinstance(ref, str):
                raise RefError("ref-unresolved", ref)
            if not ref.startswith("#"):
                raise RefError("ref-remote", ref)
            if ref in seen or len(seen) >= limits.MAX_IMPORT_REF_HOPS:
                raise RefError("ref-loop", ref)
            seen.append(ref)
            self.budget.spend()
            node = self.pointer(ref)
        if kept and isinstance(node, dict):
            node = {**node, **kept}
        return node

    def pointer(self, ref: str) -> Any:
        """What a local reference (`#/components/schemas/Pet`, RFC 6901 in a URI fragment) points at."""
        path = unquote(ref[1:])
        if path == "":
            return self.document
        if not path.startswith("/"):
            raise RefError("ref-unresolved", ref)  # a plain-name fragment ($anchor) is not followed
        node: Any = self.document
        for token in path[1:].split("/"):
            token = token.replace("~1", "/").replace("~0", "~")
            if isinstance(node, dict) and token in node:
                node = node[token]
            elif isinstance(node, dict) and token.isdigit() and int(token) in node:
                node = node[int(token)]  # YAML reads an unquoted 200 as a number
            elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
                node = node[int(token)]
            else:
                raise RefError("ref-unresolved", ref)
        return node
