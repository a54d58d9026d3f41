"""What an import is asked to do (`POST /v1/tools/import`'s body), checked whole, and the server it resolves to."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import urljoin, urlsplit

from service.catalogue import Violation, violation
from service.errors import invalid
from service.importing.bounds import refused

FIELDS = ("document", "url", "server", "subject_parameter", "project", "operations", "apply", "update_existing",
          "requires_approval")
_VARIABLE = re.compile(r"\{([^{}]*)\}")


@dataclass(frozen=True)
class ImportOptions:
    """An import's request: the document (or its address), and how to map and whether to write."""

    document: str | None = None
    url: str | None = None
    #: The chosen server: one of the document's, by URL or index, or any absolute address. None: each operation's
    #: own servers, else the document's first.
    server: str | int | None = None
    #: The parameter that names the person, which becomes the reserved subject (and the tool per-user).
    subject_parameter: str | None = None
    project: str | None = None
    #: operationIds or "METHOD /path"; None: every operation.
    operations: tuple[str, ...] | None = None
    apply: bool = False
    #: A tool that already exists gets a new draft (from its latest version) instead of being refused as taken.
    update_existing: bool = False
    #: The person's choice of whether each call waits for their approval, by operation (operationId or
    #: "METHOD /path"), in place of the importer's; the operations not named keep the importer's choice.
    requires_approval: tuple[tuple[str, bool], ...] = ()

    @classmethod
    def parse(cls, data: Any) -> "ImportOptions":
        """The options, or 422 naming every field that does not fit at once."""
        if not isinstance(data, dict):
            raise invalid([violation("", "field-type")])
        found = [violation(key, "field-unknown") for key in sorted(set(data) - set(FIELDS), key=str)]
        values: dict[str, Any] = {}
        for key in ("document", "url", "subject_parameter", "project"):
            values[key] = _typed(data, key, str, found)
        for key in ("apply", "update_existing"):
            values[key] = bool(_typed(data, key, bool, found))
        server = data.get("server")
        if server == "":
            server = None
        if server is not None and (isinstance(server, bool) or not isinstance(server, (str, int))):
            found.append(violation("server", "field-type"))
            server = None
        operations = _typed(data, "operations", list, found)
        if operations is not None:
            if all(isinstance(o, str) for o in operations):
                operations = tuple(operations)
            else:
                found.append(violation("operations", "field-type"))
                operations = None
        approvals = _typed(data, "requires_approval", dict, found) or {}
        if not all(isinstance(v, bool) for v in approvals.values()):
            found.append(violation("requires_approval", "field-type"))
            approvals = {}
        if (data.get("document") is None) == (data.get("url") is None):
            found.append(violation("document", "document-required"))
        if found:
            raise invalid(found)
        return cls(server=server, operations=operations, requires_approval=tuple(approvals.items()), **values)


def _typed(data: dict[str, Any], key: str, kind: type, found: list[Violation]) -> Any:
    value = data.get(key)
    if value is None or isinstance(value, kind):
        return value
    found.append(violation(key, "field-type"))
    return None


def server_url(server: Any, base: str | None) -> str | None:
    """A Server Object's URL with each variable at its default, made absolute against `base` (where the document
    was fetched from) if it is relative; None when it cannot be made absolute."""
    if not isinstance(server, dict) or not isinstance(server.get("url"), str):
        return None
    variables = server.get("variables")
    if not isinstance(variables, dict):
        variables = {}

    def default(match: re.Match) -> str:
        variable = variables.get(match.group(1))
        value = variable.get("default") if isinstance(variable, dict) else None
        return str(value) if value is not None else match.group(0)

    url = _VARIABLE.sub(default, server["url"])
    if not _absolute(url):
        url = urljoin(base, url) if base else ""
    return url if _absolute(url) else None


def first_server(servers: Any, base: str | None) -> str | None:
    """The first of a `servers` list that gives an absolute URL, if any."""
    if not isinstance(servers, list):
        return None
    return next((u for u in (server_url(s, base) for s in servers) if u is not None), None)


def chosen_server(document: dict[str, Any], server: str | int | None, base: str | None) -> str | None:
    """The server every operation is called on when one is chosen, or None to use each operation's own.

    422 on `server` when the choice is neither one of the document's servers (by URL, with or without its
    variables filled, or by index) nor an absolute http or https address.
    """
    if server is None:
        return None
    servers = document.get("servers")
    if not isinstance(servers, list):
        servers = []
    if isinstance(server, int):
        if 0 <= server < len(servers) and server_url(servers[server], base):
            return server_url(servers[server], base)
        raise refused("server-unknown", field="server")
    for candidate in servers:
        url = server_url(candidate, base)
        if url is not None and server.rstrip("/") in (url.rstrip("/"), str(candidate.get("url")).rstrip("/")):
            return url
    if _absolute(server):
        return server
    raise refused("server-unknown", field="server")


def _absolute(url: str) -> bool:
    try:
        parts = urlsplit(url)
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(parts.netloc)
