"""What a path segment may be, for every route of the service (API, dashboard, MCP): decided once, in the URL map.

A value no route takes matches no route, so it is a 404 before any code runs: a version number past what the database
stores (an overflow on SQLite, whatever PostgreSQL makes of it) or a name with a control character (PostgreSQL cannot
hold a NUL, and no name has one).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from werkzeug.routing import IntegerConverter, UnicodeConverter

from service.limits import MAX_STORED_INTEGER
from service.text import CONTROL_CHARACTERS, CONTROL_CHARACTERS_ECMA

if TYPE_CHECKING:
    from flask import Flask
    from flask_smorest import Api


class VersionConverter(IntegerConverter):
    """`<version:number>`: a published version number, 1 to MAX_STORED_INTEGER."""

    def __init__(self, map: Any) -> None:
        super().__init__(map, min=1, max=MAX_STORED_INTEGER)


class IdentifierConverter(UnicodeConverter):
    """The default converter (`<name>`): one path segment with no control character."""

    def __init__(self, map: Any, *args: Any, **kwargs: Any) -> None:
        super().__init__(map, *args, **kwargs)
        self.regex = self.regex.replace("[^/]", f"[^/{CONTROL_CHARACTERS}]", 1)


#: What the OpenAPI document says of an identifier in a path (a JSON Schema pattern, ECMA-262 syntax).
IDENTIFIER_SCHEMA = {"type": "string", "minLength": 1, "pattern": f"^[^/{CONTROL_CHARACTERS_ECMA}]+$"}


def install_converters(app: "Flask") -> None:
    """Make these the converters of `app`'s routes; before any route is added, so every one uses them."""
    app.url_map.converters.update(default=IdentifierConverter, string=IdentifierConverter, version=VersionConverter)


def document_converters(api: "Api") -> None:
    """Tell the OpenAPI document what the converters take (a version number's bounds come from the converter)."""
    api.register_converter(IdentifierConverter, lambda _converter: dict(IDENTIFIER_SCHEMA))
