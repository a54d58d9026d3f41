"""Shapes shared by several resources, for the OpenAPI document; and the fields that bound what a query string may
carry, with the refusal that names each field and its rule."""
from __future__ import annotations

from typing import Any

from marshmallow import EXCLUDE, Schema, ValidationError, fields

from service.catalogue import RULES
from service.limits import DEFAULT_PAGE, MAX_PAGE, MAX_STORED_INTEGER, MAX_TOOL_NAME_CHARS
from service.text import CONTROL_CHARACTERS_ECMA, text_problem


class ViolationSchema(Schema):
    field = fields.String(required=True, metadata={
        "description": 'The field at fault, such as "parameters[1].location"; "" for the request as a whole.'})
    rule = fields.String(required=True, metadata={"description": "A stable rule id, such as type-location-mismatch."})
    message = fields.String(required=True, metadata={"description": "The rule's one sentence."})


class ProblemSchema(Schema):
    """The one JSON error shape: every violated rule at once."""

    code = fields.String(required=True, metadata={"description": "A stable code, such as invalid or not-found."})
    message = fields.String(required=True)
    errors = fields.List(fields.Nested(ViolationSchema), required=True)


class IgnoresUnknownSchema(Schema):
    """A request body whose fields not listed are ignored (the document then allows them), unlike a definition's,
    where an unknown field is refused (`field-unknown`)."""

    class Meta:
        unknown = EXCLUDE


class VersionNumberSchema(Schema):
    version = fields.Integer()


def _broken(rule: str) -> ValidationError:
    # A message that carries its rule, for `service.http.errors.arguments_refused` to report as such.
    return ValidationError([{"rule": rule, "message": RULES[rule]}])


class Text(fields.String):
    """A string that could name something stored: no control character, no unpaired surrogate (`service.text`)."""

    def __init__(self, **kwargs: Any) -> None:
        metadata = {"pattern": f"^[^{CONTROL_CHARACTERS_ECMA}]*$", **kwargs.pop("metadata", {})}
        super().__init__(metadata=metadata, **kwargs)

    def _deserialize(self, value: Any, attr: Any, data: Any, **kwargs: Any) -> str:
        text = super()._deserialize(value, attr, data, **kwargs)
        problem = text_problem(text)
        if problem is not None:
            raise _broken(problem)
        return text


class StoredInteger(fields.Integer):
    """A whole number from 1 to what the database stores (`maximum`, MAX_STORED_INTEGER unless given): a number past
    it is refused (`number-range`) rather than sent to the database, where it overflowed."""

    def __init__(self, *, maximum: int = MAX_STORED_INTEGER, **kwargs: Any) -> None:
        metadata = {"minimum": 1, "maximum": maximum, **kwargs.pop("metadata", {})}
        super().__init__(metadata=metadata, **kwargs)
        self.maximum = maximum

    def _deserialize(self, value: Any, attr: Any, data: Any, **kwargs: Any) -> int:
        number = super()._deserialize(value, attr, data, **kwargs)
        if not 1 <= number <= self.maximum:
            raise _broken("number-range")
        return number


class PageLimit(fields.Integer):
    """A page's `limit`: 1 to MAX_PAGE lines (DEFAULT_PAGE when not given); past that `page-limit`."""

    def __init__(self, **kwargs: Any) -> None:
        metadata = {"minimum": 1, "maximum": MAX_PAGE, "default": DEFAULT_PAGE, **kwargs.pop("metadata", {})}
        super().__init__(load_default=DEFAULT_PAGE, metadata=metadata, **kwargs)

    def _deserialize(self, value: Any, attr: Any, data: Any, **kwargs: Any) -> int:
        number = super()._deserialize(value, attr, data, **kwargs)
        if not 1 <= number <= MAX_PAGE:
            raise _broken("page-limit")
        return number


class BoundedText(Text):
    """Text of at most `longest` characters; a longer value breaks `rule`."""

    def __init__(self, *, longest: int, rule: str, **kwargs: Any) -> None:
        metadata = {"maxLength": longest, **kwargs.pop("metadata", {})}
        super().__init__(metadata=metadata, **kwargs)
        self.longest, self.rule = longest, rule

    def _deserialize(self, value: Any, attr: Any, data: Any, **kwargs: Any) -> str:
        text = super()._deserialize(value, attr, data, **kwargs)
        if len(text) > self.longest:
            raise _broken(self.rule)
        return text


class NameAfter(BoundedText):
    """Paging by name: the page starts after this name, the `next` of the page before."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(longest=MAX_TOOL_NAME_CHARS, rule="after-format", metadata={
            "description": "Paging: the names after this one (the `next` of the page before)."}, **kwargs)


class RepinSchema(Schema):
    project = fields.String(metadata={"description": "A project whose draft version pinned the tool's draft."})
    tool = fields.String()
    version = fields.Integer(metadata={"description": "The version that draft became, which the project's draft "
                                                      "now pins."})


class PublishedSchema(VersionNumberSchema):
    repinned = fields.List(fields.Nested(RepinSchema), metadata={
        "description": "Every project draft that pinned the published draft, now pinning its version."})


class ToolVersionSchema(Schema):
    tool = fields.String()
    version = fields.Integer()


class ProjectPublishedSchema(PublishedSchema):
    published = fields.List(fields.Nested(ToolVersionSchema), metadata={
        "description": "The pinned tool drafts this publish published, each with the version it became."})
