"""A tool definition as plain data: what the registry validates and the dispatcher builds from.

Both the registry (which validates and versions definitions) and the dispatcher (which builds
requests from them) use these dataclasses, so they live below both. No Flask, no database.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

SCOPES = ("shared", "per_user")
METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")
BODY_METHODS = ("POST", "PUT", "PATCH")
TYPES = ("string", "number", "boolean", "array", "object")
SCALAR_TYPES = ("string", "number", "boolean")
ELEMENT_TYPES = SCALAR_TYPES
LOCATIONS = ("query", "path", "body")

#: The reserved parameter the platform fills from the session token, never from the model.
SUBJECT = "subject"
#: Words a tool may not be named: the fixed segments that sit where a tool's name does in the service's own paths
#: (`/tools/new`, the dashboard's Register a tool; `/v1/tools/import`, the API's import), so a tool's pages and its
#: API never share a path with a screen or a route (tests/registry/test_reserved_names.py derives them from the
#: routes). Registration refuses them; a tool registered under one before they were reserved keeps its name.
RESERVED_TOOL_NAMES = ("import", "new")


@dataclass(frozen=True)
class Parameter:
    """One input of a tool and where it goes in the request."""

    name: str
    type: str
    location: str
    required: bool = True
    description: str = ""
    element_type: str | None = None

    @property
    def is_subject(self) -> bool:
        return self.name == SUBJECT

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "name": self.name,
            "type": self.type,
            "location": self.location,
            "required": self.required,
            "description": self.description,
        }
        if self.element_type is not None:
            data["element_type"] = self.element_type
        return data


@dataclass(frozen=True)
class ToolDefinition:
    """Everything one draft or published version of a tool says. The tool name never changes."""

    name: str
    description: str
    method: str
    url: str
    scope: str = "shared"
    runs_at_session_start: bool = False
    #: The person in the conversation approves each call before it is sent (the model cannot approve for them).
    requires_approval: bool = False
    required_entitlement: str | None = None
    parameters: tuple[Parameter, ...] = field(default_factory=tuple)
    #: What the model sees (docs/shaping.md), each None or empty for the spec's behaviour: a JMESPath expression over
    #: a 2xx JSON body; the top-level fields of a JSON error body the model may read; and (outcome, sentence) pairs,
    #: an outcome being a failure kind, `kind:status`, or `empty` (a 2xx with no body).
    response_shape: str | None = None
    error_fields: tuple[str, ...] = ()
    outcome_messages: tuple[tuple[str, str], ...] = ()

    @property
    def shaped(self) -> bool:
        """Whether the tool sets any of the three: the spec's behaviour holds for a tool that sets none."""
        return bool(self.response_shape or self.error_fields or self.outcome_messages)

    @property
    def subject_parameter(self) -> Parameter | None:
        return next((p for p in self.parameters if p.is_subject), None)

    @property
    def model_parameters(self) -> tuple[Parameter, ...]:
        """The parameters the model fills: all but the subject, which it never sees."""
        return tuple(p for p in self.parameters if not p.is_subject)

    def to_dict(self) -> dict[str, Any]:
        """The versioned part of the definition as JSON-ready data (no display name, no project)."""
        return {
            "name": self.name,
            "description": self.description,
            "method": self.method,
            "url": self.url,
            "scope": self.scope,
            "runs_at_session_start": self.runs_at_session_start,
            "requires_approval": self.requires_approval,
            "required_entitlement": self.required_entitlement,
            "parameters": [p.to_dict() for p in self.parameters],
            **self.shaping_dict(),
        }

    def shaping_dict(self) -> dict[str, Any]:
        """The shaping fields the tool sets, and only those: a definition that sets none reads and stores as before."""
        data: dict[str, Any] = {}
        if self.response_shape:
            data["response_shape"] = self.response_shape
        if self.error_fields:
            data["error_fields"] = list(self.error_fields)
        if self.outcome_messages:
            data["outcome_messages"] = dict(self.outcome_messages)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "ToolDefinition":
        """Rebuild a definition stored by `to_dict` (already validated; no checks here)."""
        return cls(
            name=data["name"],
            description=data["description"],
            method=data["method"],
            url=data["url"],
            scope=data.get("scope", "shared"),
            runs_at_session_start=bool(data.get("runs_at_session_start", False)),
            requires_approval=bool(data.get("requires_approval", False)),
            required_entitlement=data.get("required_entitlement"),
            parameters=tuple(
                Parameter(
                    name=p["name"],
                    type=p["type"],
                    location=p["location"],
                    required=p.get("required", True),
                    description=p.get("description", "") or "",
                    element_type=p.get("element_type"),
                )
                for p in data.get("parameters", ())
            ),
            response_shape=data.get("response_shape") or None,
            error_fields=tuple(data.get("error_fields") or ()),
            outcome_messages=tuple((data.get("outcome_messages") or {}).items()),
        )
